"""str_ocr_client: talking to the served models, for the demo, the tests, the benchmark and the launcher.

| module        | what it does                                                                 |
| ------------- | ---------------------------------------------------------------------------- |
| ``requests``  | each model's inputs built, and its outputs read (the one place a client spells tensors) |
| ``sending``   | many requests in flight over asyncio gRPC, an outcome per request            |
| ``http``      | the server's HTTP API with an admin key: health, repository, load/unload, probes |
| ``readiness`` | waiting until a server or a model is ready                                   |
| ``stats``     | Triton's per-model statistics and Prometheus metrics                         |

Nothing here loads torch: a client needs numpy and ``tritonclient`` only.
"""
