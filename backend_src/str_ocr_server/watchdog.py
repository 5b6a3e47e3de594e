"""Watching every stub process, and replacing the instance whose stub died without unloading its model.

In this server release the Python backend neither restarts a dead stub nor stops handing requests to its
instance, and the server stays ready. The watchdog reads the stubs from ``/proc`` every ``interval``
seconds, so a death is seen at once whatever the load, and then:

1. closes the readiness gate (``str_ocr_server.gate``): the server reports not ready;
2. loads the model anew, without unloading it: a load request carrying the model's own configuration
   with one parameter changed (``RELOAD_PARAMETER``) makes the server build a new model beside the old
   one and swap it in once ready, and reload the ensembles that use it the same way, so they keep
   answering. (A plain load of a loaded, unchanged model is skipped; unloading first would unload the
   ensembles too; a configuration that changes only the instance groups replaces instances in place,
   which aborted this server release once while it destroyed the dead one.)
3. opens the gate once every served model has all its instances again, and stops the replaced version's
   surviving stubs ``RETIRE_AFTER`` seconds later.

A model it cannot recover in ``ATTEMPTS`` tries stops the server, so that the launcher exits non-zero and is
restarted: a server that stays live but never ready again would not be.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from str_ocr_client.http import TritonHTTP

from .gate import ReadinessGate
from .metrics import LauncherMetrics
from .stubs import Stub, is_alive, living_stubs, parse_stub, stat_fields

RELOAD_PARAMETER = "str_ocr_reload"
"""A parameter no model reads, counted up on each recovery so that the server sees a changed model."""
ATTEMPTS = 3
"""Recoveries of one model tried before the launcher gives up and stops the server."""
BACKOFF = 5.0
"""Seconds before the second attempt; each later one waits that much longer again."""
RETIRE_AFTER = 10.0
"""Seconds the old version's surviving stubs get to answer what they hold before they are stopped."""


def served_instances(config: dict) -> int:
    """How many instances, so stubs, the server runs for a model, from the configuration it reports (counts and
    kinds filled in): a KIND_GPU group has ``count`` on each of its GPUs."""
    def size(group: dict) -> int:
        return int(group.get("count", 1)) * (len(group.get("gpus", [])) or 1 if group.get("kind") == "KIND_GPU" else 1)
    return sum(size(g) for g in config.get("instance_group", [])) or 1


class Watchdog(threading.Thread):
    def __init__(self, http: TritonHTTP, server_pid: int, repository: Path, instances: dict[str, int],
                 gate: ReadinessGate, interval: float, log: Callable[[str], None], metrics: LauncherMetrics) -> None:
        super().__init__(name="watchdog", daemon=True)
        self.http, self.server_pid, self.repository = http, server_pid, repository
        self.instances, self.gate, self.interval, self.log = dict(instances), gate, interval, log
        self.stopped = threading.Event()
        self.watched: dict[int, Stub] = {}
        self.recovering: set[str] = set()
        self.metrics = metrics
        self.lock = threading.Lock()

    def stop(self) -> None:
        self.stopped.set()

    def adopt(self, models: set[str]) -> None:
        """Watch the living stubs of ``models``. One that died before this first look is a zombie without a command
        line, which names no model: ``_deaths`` counts it as missing instead."""
        stubs = [s for s in living_stubs(self.server_pid, self.repository) if s.model in models]
        with self.lock:
            self.watched = {pid: s for pid, s in self.watched.items() if s.model not in models}
            self.watched |= {s.pid: s for s in stubs}

    def _deaths(self) -> dict[str, tuple[list[Stub], int]]:
        """The models not being recovered that have lost a stub: the watched stubs that died, and how many
        instances are missing in all. Marks them as being recovered."""
        found = {}
        with self.lock:
            for model, expected in self.instances.items():
                stubs = [s for s in self.watched.values() if s.model == model]
                dead = [s for s in stubs if not is_alive(s.pid)]
                missing = expected - (len(stubs) - len(dead))
                if model not in self.recovering and missing > 0:
                    self.recovering.add(model)
                    found[model] = (dead, missing)
        return found

    def run(self) -> None:
        self.adopt(set(self.instances))
        while not self.stopped.wait(self.interval):
            for model, (dead, missing) in self._deaths().items():
                names = [f"{s.instance} (pid {s.pid})" for s in dead]
                names += [f"{missing - len(dead)} that died before it was watched"] if missing > len(dead) else []
                self.gate.close(model)
                self.metrics.died(model, missing)
                self.log(f"watchdog: the stub of {', '.join(names)} died; not ready until {model}'s instances are replaced")
                threading.Thread(target=self.recover, args=(model,), daemon=True).start()

    def _new_stubs(self, model: str, timeout: float = 120) -> list[Stub]:
        """The model's stubs started since it was last watched, once there is one per instance ([] at timeout).

        A surviving stub of the old version may live on: the backend cannot unload a version with a dead stub.
        """
        with self.lock:
            old = set(self.watched)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.stopped.is_set():
            new = [s for s in living_stubs(self.server_pid, self.repository) if s.model == model and s.pid not in old]
            if len(new) >= self.instances[model]:
                return new
            time.sleep(self.interval)
        return []

    def _load_anew(self, model: str) -> tuple[int, object]:
        config = self.http.config(model)
        if config is None:
            return 0, "its configuration could not be read"
        parameters = config.setdefault("parameters", {})
        generation = int(parameters.get(RELOAD_PARAMETER, {}).get("string_value", "0")) + 1
        parameters[RELOAD_PARAMETER] = {"string_value": str(generation)}
        return self.http.load(model, config)

    def _retire(self, survivors: list[Stub]) -> None:
        """Stop the old version's surviving stubs. This server release never destroys a version with a dead
        instance, so they would live on, each holding a whole model's memory, and serve nothing. (A server that
        does destroy it has stopped them already: each pid is checked to be still the same stub of this server.)"""
        for stub in survivors:
            fields = stat_fields(stub.pid)
            if not fields or fields[1] != str(self.server_pid) or parse_stub(stub.pid, self.repository) != stub:
                continue
            try:
                os.kill(stub.pid, signal.SIGKILL)
            except OSError:
                continue
            self.log(f"watchdog: stopped {stub.instance} (pid {stub.pid}) of {stub.model}'s replaced version")

    def recover(self, model: str) -> None:
        """Replace ``model``'s instances, trying ``ATTEMPTS`` times; if it cannot, stop the server: the launcher then
        exits non-zero and an orchestrator restarts it (a not-ready server that stays live would never be)."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                if self._recover_once(model):
                    return
            except Exception as error:  # noqa: BLE001 - a failed attempt, whatever failed
                self.log(f"watchdog: recovering {model} failed: {type(error).__name__}: {error}")
            if self.stopped.wait(BACKOFF * attempt):
                return
        self.log(f"watchdog: {model} could not be recovered in {ATTEMPTS} attempts: stopping tritonserver")
        try:
            os.kill(self.server_pid, signal.SIGTERM)
        except OSError:
            pass

    def _recover_once(self, model: str) -> bool:
        start = time.monotonic()
        # The backend kills a dead stub only once a request failed on its instance: let each one fail.
        for _ in range(2 * self.instances[model]):
            self.http.probe(model)
        status, body = self._load_anew(model)
        new = self._new_stubs(model) if status == 200 else []
        if not new:
            self.log(f"watchdog: loading {model} again failed ({status}): {body}")
            return False
        with self.lock:
            survivors = [s for s in self.watched.values() if s.model == model and is_alive(s.pid)]
            self.watched = {pid: s for pid, s in self.watched.items() if s.model != model} | {s.pid: s for s in new}
            self.recovering.discard(model)
        retire = threading.Timer(RETIRE_AFTER, self._retire, args=(survivors,))
        retire.daemon = True
        retire.start()
        seconds = time.monotonic() - start
        self.metrics.recovered(model, seconds)
        self.log(f"watchdog: {model} has all its instances again after {seconds:.1f} s")
        if not any(self.gate.open(model) for _ in range(3)):
            raise RuntimeError("the readiness gate did not open")
        return True
