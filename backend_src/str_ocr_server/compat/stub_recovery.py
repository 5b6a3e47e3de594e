"""Watching every stub process, and replacing the instance whose stub died without unloading its model.

Server 2.51's Python backend neither restarts a dead stub nor stops handing requests to its instance, and the
server stays ready (no upstream fix yet: server#8604). The watchdog reads the stubs from ``/proc`` every
``interval`` seconds, so a death is seen at once whatever the load, and then:

1. marks the server not ready (``not_ready``), which also holds the proxies' retries (``retry``);
2. loads the model anew, without unloading it: a load request carrying the model's own configuration with one
   parameter changed (``RELOAD_PARAMETER``) makes the server build a new model beside the old one and swap it in
   once ready, and reload the ensembles that use it the same way, so they keep answering. (A plain load of a
   loaded, unchanged model is skipped; unloading first would unload the ensembles too; a configuration that
   changes only the instance groups replaces instances in place, which can abort this release.)
3. marks it ready once every served model has all its instances again, and ``RETIRE_AFTER`` seconds later stops
   the replaced version's surviving stubs, removes its stubs' regions from ``/dev/shm`` and has the server wait
   for its dead stubs (``stub_reaper``), which it would otherwise never do.

A model it cannot recover in ``ATTEMPTS`` tries stops the server, which the launcher then starts anew.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from math import prod
from pathlib import Path

from str_ocr_client.http import TritonHTTP

from ..metrics import LauncherMetrics
from .not_ready import Readiness
from .retry import from_dead_instance
from .stubs import Stub, exit_status, is_zombie, living_stubs, parse_stub, remove_regions, stat_fields

RELOAD_PARAMETER = "str_ocr_reload"
"""A parameter no model reads, counted up on each recovery so that the server sees a changed model."""
ATTEMPTS = 3
"""Recoveries of one model tried before the launcher gives up and stops the server."""
BACKOFF = 5.0
"""Seconds before the second attempt; each later one waits that much longer again."""
RETIRE_AFTER = 10.0
"""Seconds the old version's surviving stubs get to answer what they hold before they are stopped."""
REAP_GRACE = 1.0
"""Seconds a stub that exited cleanly gets to be reaped by the server before it counts as dead. A stub the server
stops in order (an operator's load or unload) exits 0 and is a zombie for the moment before the server waits for
it; a crashed or killed stub exits otherwise and is a death at once. (A model that ends its own stub with
``sys.exit(0)`` is so seen a grace late.)"""


def probe(http: TritonHTTP, model: str, timeout: float = 10) -> str:
    """"alive", "dead" (its stub died) or "unknown" (no answer, queue full, ...), from the smallest request the
    model's metadata allows: every variable dim 1, zeros. Any answer from the model, an error included, shows that
    its stub is alive; the backend kills a dead stub's instance only once a request failed on it."""
    status, metadata = http.call(f"/models/{model}", timeout=timeout)
    if status != 200 or not isinstance(metadata, dict):
        return "unknown"
    inputs = []
    for tensor in metadata["inputs"]:
        shape = [max(1, int(d)) for d in tensor["shape"]]
        zero = "" if tensor["datatype"] == "BYTES" else 0
        inputs.append({"name": tensor["name"], "shape": shape, "datatype": tensor["datatype"],
                       "data": [zero] * prod(shape)})
    status, body = http.call(f"/models/{model}/infer", {"inputs": inputs}, timeout)
    if from_dead_instance(str(body)):
        return "dead"
    return "alive" if status in (200, 400) else "unknown"


def served_instances(config: dict) -> int:
    """How many instances, so stubs, the server runs for a model, from the configuration it reports (counts and
    kinds filled in): a KIND_GPU group has ``count`` on each of its GPUs."""
    def size(group: dict) -> int:
        devices = (len(group.get("gpus", [])) or 1) if group.get("kind") == "KIND_GPU" else 1
        return int(group.get("count", 1)) * devices
    return sum(size(g) for g in config.get("instance_group", [])) or 1


class Watchdog(threading.Thread):
    def __init__(self, http: TritonHTTP, server_pid: int, repository: Path, instances: dict[str, int],
                 readiness: Readiness, interval: float, log: Callable[[str], None], metrics: LauncherMetrics,
                 reap: Callable[[Iterable[int]], None] | None = None) -> None:
        super().__init__(name="watchdog", daemon=True)
        self.reap = reap
        """Has the server wait for some of its dead children (``StubReaper.reap``); None where it cannot."""
        self.http, self.server_pid, self.repository = http, server_pid, repository
        self.instances, self.readiness, self.interval, self.log = dict(instances), readiness, interval, log
        self.stopped = threading.Event()
        self.watched: dict[int, Stub] = {}
        self.clean_exits: dict[tuple[int, str], float] = {}
        """When each watched stub, by pid and start time, was first seen a zombie that had exited cleanly."""
        self.recovering: set[str] = set()
        self.next_lookup = 0.0
        self.recoveries = 0
        """Models replaced so far: each leaves behind a version the server will never unload."""
        self.metrics = metrics
        self.lock = threading.Lock()
        self.timers: list[threading.Timer] = []

    def stop(self) -> None:
        """Stop watching, and drop the retirements still to come (their server is stopping or gone)."""
        self.stopped.set()
        for timer in self.timers:
            timer.cancel()

    def stubs(self) -> list[Stub]:
        """The stubs watched now."""
        with self.lock:
            return list(self.watched.values())

    def adopt(self, models: set[str]) -> None:
        """Watch the living stubs of ``models`` (instead of those watched so far)."""
        stubs = [s for s in living_stubs(self.server_pid, self.repository) if s.model in models]
        with self.lock:
            self.watched = {pid: s for pid, s in self.watched.items() if s.model not in models}
            self.watched |= {s.pid: s for s in stubs}
            self.clean_exits = {key: t for key, t in self.clean_exits.items() if key[0] in self.watched}

    def _short(self) -> dict[str, int]:
        """How many instances each model lacks among its watched stubs."""
        with self.lock:
            return {m: n - sum(s.model == m for s in self.watched.values()) for m, n in self.instances.items()}

    def _deaths(self) -> dict[str, list[Stub]]:
        """The watched stubs that died, by model, leaving out the models being recovered.

        A dead stub stays a zombie: this server release reaps one only when it stops its instance in order (and
        a stub so stopped, a zombie for a moment before that, is given ``REAP_GRACE``).
        A watched stub gone altogether was stopped so, by a load or an unload an operator asked for: the
        model's stubs are looked up again instead (also while it has fewer than its instances: loaded again)."""
        dead: dict[str, list[Stub]] = {}
        looked_up: set[str] = set()
        with self.lock:
            for stub in self.watched.values():
                if stub.model in self.recovering:
                    continue
                fields = stat_fields(stub.pid)
                if fields is None:
                    looked_up.add(stub.model)
                elif is_zombie(fields) and not self._within_reap_grace(stub.pid, fields):
                    dead.setdefault(stub.model, []).append(stub)
        short = {m for m, n in self._short().items() if n > 0 and m not in self.recovering}
        if looked_up - set(dead) or (short and time.monotonic() >= self.next_lookup):
            self.next_lookup = time.monotonic() + 1.0
            self.adopt((looked_up | short) - set(dead))
        return dead

    def _within_reap_grace(self, pid: int, fields: list[str]) -> bool:
        """Whether zombie ``pid`` (its ``stat_fields``) exited cleanly less than ``REAP_GRACE`` seconds ago. The first
        call for a zombie starts its clock; the start time in the key keeps a reused pid from finding an old one."""
        if exit_status(fields) != 0:
            return False
        first_seen = self.clean_exits.setdefault((pid, fields[19]), time.monotonic())
        return time.monotonic() - first_seen < REAP_GRACE

    def _recover_each(self, lost: dict[str, tuple[list[Stub], int]]) -> None:
        """Mark not ready and start a recovery of each model that ``lost`` (its dead stubs, how many in all)."""
        for model, (dead, count) in lost.items():
            with self.lock:
                self.recovering.add(model)
            names = [f"{s.instance} (pid {s.pid})" for s in dead]
            names += [f"{count - len(dead)} that died before the first look"] if count > len(dead) else []
            self.readiness.mark_not_ready(model)
            self.metrics.died(model, count)
            self.log(f"watchdog: the stub of {', '.join(names)} died; not ready until {model}'s instances are replaced")
            threading.Thread(target=self.recover, args=(model,), daemon=True).start()

    def run(self) -> None:
        # A stub that died before this first look is a zombie without a command line, which names no model: only
        # the count of its model's living stubs shows it.
        self.adopt(set(self.instances))
        self._recover_each({m: ([], n) for m, n in self._short().items() if n > 0})
        while not self.stopped.wait(self.interval):
            self._recover_each({m: (dead, len(dead)) for m, dead in self._deaths().items()})

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

    def _retire(self, old: list[Stub]) -> None:
        """Stop the old version's surviving stubs and remove its stubs' shared-memory regions. This server release
        never destroys a version with a dead instance, so its survivors would live on, each holding a whole model's
        memory and serving nothing, and no one would unlink its regions. (A server that does destroy it has done
        both already: each pid is checked to be still the same stub of this server.)"""
        for stub in old:
            fields = stat_fields(stub.pid)
            if fields and not is_zombie(fields) and fields[1] == str(self.server_pid) \
                    and parse_stub(stub.pid, self.repository) == stub:
                try:
                    os.kill(stub.pid, signal.SIGKILL)
                    self.log(f"watchdog: stopped {stub.instance} (pid {stub.pid}) of {stub.model}'s replaced version")
                except OSError:
                    pass
        remove_regions(old)
        if self.reap:
            self._reap_when_dead([s.pid for s in old])

    def _reap_when_dead(self, pids: list[int], timeout: float = 5.0) -> None:
        """Once the stubs just stopped are dead (moments after SIGKILL), have the server wait for each that is its
        dead child; a pid that is not by then, or no longer the server's child, is left as it is."""
        def child(pid: int) -> list[str] | None:
            fields = stat_fields(pid)
            return fields if fields and fields[1] == str(self.server_pid) else None
        deadline = time.monotonic() + timeout
        while any((f := child(p)) and not is_zombie(f) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.reap([p for p in pids if is_zombie(child(p))])

    def recover(self, model: str) -> None:
        """Replace ``model``'s instances, trying ``ATTEMPTS`` times; if it cannot, stop the server, which the launcher
        then starts anew (a not-ready server that stays live would never be)."""
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
            probe(self.http, model)
        status, body = self._load_anew(model)
        new = self._new_stubs(model) if status == 200 else []
        if not new:
            self.log(f"watchdog: loading {model} again failed ({status}): {body}")
            return False
        with self.lock:
            old = [s for s in self.watched.values() if s.model == model]
            self.watched = {pid: s for pid, s in self.watched.items() if s.model != model} | {s.pid: s for s in new}
            self.recovering.discard(model)
        retire = threading.Timer(RETIRE_AFTER, self._retire, args=(old,))
        retire.daemon = True
        self.timers.append(retire)
        retire.start()
        seconds = time.monotonic() - start
        self.recoveries += 1
        self.metrics.recovered(model, seconds)
        self.log(f"watchdog: {model} has all its instances again after {seconds:.1f} s")
        if not any(self.readiness.mark_ready(model) for _ in range(3)):
            raise RuntimeError("the server could not be marked ready again")
        return True
