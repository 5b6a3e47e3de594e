"""The launcher's own Prometheus metrics, on a port of their own beside the server's.

The server cannot count what the launcher does: a model's metric families go with the version they belong to,
which the watchdog replaces when a stub dies, and all of them go when the server itself is restarted. So the
launcher exports:

- ``str_ocr_server_restarts_total``: tritonserver started again after it exited by itself;

and per served model:

- ``str_ocr_model_recoveries_total``: models loaded again after a stub died (counted once every instance
  is back);
- ``str_ocr_model_recovery_seconds``: from the death seen to every instance back;
- ``str_ocr_model_instances_dead``: stubs seen dead and not yet replaced (0 while the model is healthy).

Every series exists from the start at 0, so that ``increase()`` sees the first recovery.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, start_http_server

LAUNCHER_METRICS_PORT = 8003
"""Where the launcher exports its own metrics, beside the server's 8002."""
RECOVERY_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300)


class LauncherMetrics:
    def __init__(self, models: Iterable[str]) -> None:
        disable_created_metrics()  # a *_created series per counter is noise to the rules and the dashboard
        self.registry = CollectorRegistry(auto_describe=True)
        self.recoveries = Counter("str_ocr_model_recoveries",
                                  "Models loaded again after one of their stub processes died",
                                  ["model"], registry=self.registry)
        self.recovery_seconds = Histogram("str_ocr_model_recovery_seconds",
                                          "Seconds from a dead stub seen to every instance of its model back",
                                          ["model"], buckets=RECOVERY_BUCKETS, registry=self.registry)
        self.dead = Gauge("str_ocr_model_instances_dead", "Stub processes seen dead and not yet replaced",
                          ["model"], registry=self.registry)
        self.restarts = Counter("str_ocr_server_restarts", "tritonserver started again after it exited by itself",
                                registry=self.registry)
        for model in models:
            for family in (self.recoveries, self.recovery_seconds, self.dead):
                family.labels(model)

    def serve(self, port: int, address: str = "0.0.0.0") -> None:
        """Answer ``GET /metrics`` on ``address:port`` from a daemon thread."""
        start_http_server(port, address, registry=self.registry)

    def restarted(self) -> None:
        self.restarts.inc()

    def died(self, model: str, stubs: int) -> None:
        self.dead.labels(model).set(stubs)

    def recovered(self, model: str, seconds: float) -> None:
        self.dead.labels(model).set(0)
        self.recoveries.labels(model).inc()
        self.recovery_seconds.labels(model).observe(seconds)
