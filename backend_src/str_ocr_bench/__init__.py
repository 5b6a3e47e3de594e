"""str_ocr_bench: which configuration to deploy, measured with NVIDIA's perf_analyzer.

| module             | what it does                                                                    |
| ------------------ | ------------------------------------------------------------------------------- |
| ``perf_analyzer``  | runs the real perf_analyzer and reads its CSV                                   |
| ``cpu``            | the CPU seconds the server's processes spend, from ``/proc``                    |
| ``alone``          | the model alone, in-process: the reference for throughput and for CPU per image |
| ``configs``        | the configurations measured: the tutorial's, ours, and candidates               |
| ``report``         | the table, the plot and the recommendation, from the measurements               |
| ``sweep``          | all of it, for ``make bench``                                                   |
"""
