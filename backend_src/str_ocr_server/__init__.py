"""str_ocr_server: the launcher, ``python -m str_ocr_server``, which runs the real tritonserver on the model
repository and keeps it serving.

| module        | what it does                                                                        |
| ------------- | ----------------------------------------------------------------------------------- |
| ``cli``       | the command line: flags, the checks before starting, then the supervisor            |
| ``supervisor``| tritonserver in the foreground: ready, watched, drained on SIGTERM, restarted after a crash |
| ``startup``   | waiting for the models, tying the server's life to the launcher's, the restart budget |
| ``triton``    | finding a server binary, its release and backends, and its command line             |
| ``repository``| choosing the models a given server can load                                         |
| ``admin``     | the admin key that guards the administrative APIs                                   |
| ``drain``     | on SIGTERM, waiting until nothing is in flight before stopping the server           |
| ``metrics``   | the launcher's own Prometheus endpoint: restarts and the watchdog's recoveries      |
| ``process``   | the launcher in a child process on free ports (tests, demo, benchmarks)             |
| ``compat``    | the workarounds for server 2.51, each naming the release or issue that retires it   |
"""
