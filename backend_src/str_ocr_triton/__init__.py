"""str_ocr_triton: what the model repository needs at serving time, beside the model package ``str_ocr``.

| module            | what it does                                                                  |
| ----------------- | ----------------------------------------------------------------------------- |
| ``adapter``       | what the ``model.py`` adapters share: one response or error per request       |
| ``calls``         | calling the server's other models from a Python model (BLS)                   |
| ``metric_labels`` | the names and labels of the models' custom Prometheus metrics                 |
| ``config``        | reading the models' configs as Triton would, and the recogniser's settings    |
| ``validation``    | checking every config the way Triton would, before Triton does                |

``adapter`` and ``calls`` run only inside Triton's Python backend; the others need ``tritonclient``'s schema, not a
server.
"""
