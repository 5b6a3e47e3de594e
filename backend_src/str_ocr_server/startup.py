"""Starting tritonserver: waiting until its models are ready, tying its life to the launcher's, and how often it
may be started again."""

from __future__ import annotations

import collections
import ctypes
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

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


_prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl if sys.platform == "linux" else None
"""Resolved here, in the launcher: after fork, with other threads alive, the child must not look up symbols."""
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child: receive SIGTERM when this launcher dies, so no server outlives it (Linux)."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
