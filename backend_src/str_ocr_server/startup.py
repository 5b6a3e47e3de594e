"""Starting tritonserver: its command tied to the launcher's life, waiting until its models are ready, and how often
it may be started again."""

from __future__ import annotations

import collections
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

from str_ocr_client.http import TritonHTTP


class RestartBudget:
    """At most ``count`` restarts in any ``window`` seconds."""

    def __init__(self, count: int, window: float) -> None:
        self.count, self.window = count, window
        self.times: collections.deque[float] = collections.deque()

    def take(self) -> bool:
        """Whether one more restart is within the budget (and count it)."""
        now = time.monotonic()
        while self.times and now - self.times[0] > self.window:
            self.times.popleft()
        if len(self.times) >= self.count:
            return False
        self.times.append(now)
        return True

    def pause(self) -> float:
        """Seconds to wait before the restart just taken: none for the first in the window, then 1, 2, 4... up to
        30, so that a server that cannot start does not spin."""
        return 0.0 if len(self.times) <= 1 else min(2.0 ** (len(self.times) - 2), 30.0)


def wait_until_ready(process: subprocess.Popen, http: TritonHTTP, models: Sequence[str], timeout: float,
                     stopping: threading.Event) -> dict[str, str]:
    """Block until every model is READY (or a stop is asked for); the failed models' reasons (empty when none)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping.is_set():
        if process.poll() is not None:
            return {"tritonserver": f"exited with status {process.returncode} before it was ready (see its log above)"}
        states = {entry["name"]: entry for entry in http.index() if entry.get("version")} if http.live() else {}
        failed = {m: states[m].get("reason") or states[m]["state"] for m in models
                  if states.get(m, {}).get("state") == "UNAVAILABLE"}
        if failed or (states and all(states.get(m, {}).get("state") == "READY" for m in models)):
            return failed
        time.sleep(0.2)
    return {} if stopping.is_set() else {"tritonserver": f"not ready after {timeout:.0f} s"}


SETPRIV = shutil.which("setpriv")
"""util-linux's setpriv, there on Debian and Ubuntu, NVIDIA's images included."""


def dying_with_parent(command: list[str], variables: Mapping[str, str] = {}) -> list[str]:  # noqa: B006 - read only
    """``command`` run so that it gets SIGTERM when this launcher dies (Linux), with ``variables`` set for it alone.

    setpriv sets the parent-death signal and ``env`` the variables, each in C, then exec it: no Python runs between
    fork and exec in a launcher whose proxy threads may hold locks (gRPC's among them)."""
    settings = [f"{name}={value}" for name, value in variables.items()]
    wrapper = [SETPRIV, "--pdeathsig", "TERM", "--"] if SETPRIV else []
    return [*wrapper, *(["env", *settings] if settings else []), *command]
