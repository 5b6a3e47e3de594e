"""What the launcher says to its tritonserver over HTTP: readiness, the repository index, loading and
unloading, and probing models, with the admin key where the administrative APIs are restricted.

The watchdog is here because, in this server release, the Python backend neither restarts a model's
stub process when it dies nor stops reporting the model ready: requests to that instance fail with
"Stub process '...' is not healthy" until the model is loaded again.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from math import prod

ADMIN_HEADER = "admin-key"
GRPC_ADMIN_HEADER = f"triton-grpc-protocol-{ADMIN_HEADER}"
"""gRPC clients send the key under this name (Triton prefixes restricted-protocol headers)."""
ADMIN_APIS = "model-repository,model-config,shared-memory,statistics,trace,logging"
DEAD_STUB = "is not healthy"


def admin_key(given: str | None) -> str:
    """The operator's key, or a fresh one that only this launcher knows."""
    return given or secrets.token_urlsafe(32)


def restriction_args(key: str) -> list[str]:
    """tritonserver options that put the administrative APIs of both protocols behind ``admin-key: key``."""
    rule = f"{ADMIN_APIS}:{ADMIN_HEADER}={key}"
    return [f"--grpc-restricted-protocol={rule}", f"--http-restricted-api={rule}"]


class TritonHTTP:
    """A small client of the server's HTTP endpoint that sends the admin key on every request."""

    def __init__(self, port: int, key: str | None = None, host: str = "127.0.0.1") -> None:
        self.base = f"http://{host}:{port}/v2"
        self.headers = {"Content-Type": "application/json"} | ({ADMIN_HEADER: key} if key else {})

    def call(self, path: str, body: object | None = None, timeout: float = 5.0) -> tuple[int, object]:
        """(HTTP status, decoded JSON body or None); status 0 when the server cannot be reached."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=self.headers,
                                         method="GET" if data is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return 0, None
        try:
            return status, json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return status, raw.decode(errors="replace")

    def live(self) -> bool:
        return self.call("/health/live")[0] == 200

    def ready(self, model: str | None = None) -> bool:
        return self.call(f"/models/{model}/ready" if model else "/health/ready")[0] == 200

    def index(self) -> list[dict]:
        status, body = self.call("/repository/index", {})
        return body if status == 200 and isinstance(body, list) else []

    def load(self, model: str, timeout: float = 300) -> tuple[int, object]:
        return self.call(f"/repository/models/{model}/load", {}, timeout)

    def unload(self, model: str, timeout: float = 60) -> tuple[int, object]:
        return self.call(f"/repository/models/{model}/unload", {}, timeout)

    def probe(self, model: str, timeout: float = 10) -> str:
        """"alive", "dead" (its stub died) or "unknown" (no answer, queue full, ...).

        The probe is the smallest request the model's metadata allows: every variable dim 1, zeros.
        It asks for no real work (a recogniser refuses a 1-pixel line, a decoder a 1-byte file): any
        answer from the model, an error included, shows that its stub is alive.
        """
        status, metadata = self.call(f"/models/{model}", timeout=timeout)
        if status != 200 or not isinstance(metadata, dict):
            return "unknown"
        inputs = []
        for tensor in metadata["inputs"]:
            shape = [max(1, int(d)) for d in tensor["shape"]]
            zero = "" if tensor["datatype"] == "BYTES" else 0
            inputs.append({"name": tensor["name"], "shape": shape, "datatype": tensor["datatype"], "data": [zero] * prod(shape)})
        status, body = self.call(f"/models/{model}/infer", {"inputs": inputs}, timeout)
        if DEAD_STUB in str(body):
            return "dead"
        return "alive" if status in (200, 400) else "unknown"


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
