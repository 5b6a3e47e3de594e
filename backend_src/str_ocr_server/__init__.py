"""str_ocr_server: the Triton side of the project.

| module          | what it does                                                                   |
| --------------- | ------------------------------------------------------------------------------ |
| ``cli``         | ``python -m str_ocr_server``: runs tritonserver in the foreground              |
| ``triton``      | finding a server binary and its backends, and its command line                 |
| ``repository``  | reading the model configs, and choosing the models this server can load        |
| ``admin``       | the admin key that guards the administrative APIs                              |
| ``exposure``    | the address to listen on, and the known vulnerability that keeps it loopback   |
| ``metrics``     | the launcher's own Prometheus endpoint: the watchdog's recoveries              |
| ``watchdog``    | watching every stub process, and loading again a model whose stub died         |
| ``stubs``       | the Python backend's stub processes of a running server, from ``/proc``        |
| ``gate``        | saying "not ready" on the server's readiness endpoint                          |
| ``drain``       | on SIGTERM, waiting until nothing is in flight before stopping the server      |
| ``process``     | the launcher in a child process on free ports (tests, demo, benchmarks)        |
| ``validation``  | checking every config the way Triton would, before Triton does                 |
| ``adapter``     | what the model repository's ``model.py`` adapters share                        |
"""
