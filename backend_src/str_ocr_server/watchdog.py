"""Loading a model again when its Python stub process dies.

In this server release the Python backend neither restarts a model's stub process when it dies nor
stops reporting the model ready: requests to that instance fail with "Stub process '...' is not
healthy" until the model is loaded again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from str_ocr_client.http import TritonHTTP


class Watchdog(threading.Thread):
    """Probes each model every ``interval`` seconds and loads again the ones whose stub died.

    Recovery unloads the model first: Triton skips a load of an unchanged model that is still loaded,
    and while the model is unloaded and loading, the server's readiness endpoint reports not ready.
    Before unloading, it probes the model once more per instance and again: the backend kills a dead
    stub only once a request has failed on that instance, and otherwise waits for it forever.
    """

    def __init__(self, http: TritonHTTP, instances: dict[str, int], interval: float, log: Callable[[str], None]) -> None:
        super().__init__(name="watchdog", daemon=True)
        self.http, self.instances, self.interval, self.log = http, dict(instances), interval, log
        self.stopped = threading.Event()
        self.recoveries: list[tuple[str, float]] = []

    def stop(self) -> None:
        self.stopped.set()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            for model in self.instances:
                if not self.stopped.is_set() and self.http.probe(model) == "dead":
                    self.recover(model)

    def recover(self, model: str) -> None:
        start = time.monotonic()
        self.log(f"watchdog: {model}'s stub process died; loading it again")
        for _ in range(2 * self.instances[model]):
            self.http.probe(model)
        self.http.unload(model)
        status, body = self.http.load(model)
        if status != 200:
            self.log(f"watchdog: loading {model} again failed ({status}): {body}")
            return
        seconds = time.monotonic() - start
        self.recoveries.append((model, seconds))
        self.log(f"watchdog: {model} recovered in {seconds:.1f} s")
