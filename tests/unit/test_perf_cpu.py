"""The perf tool's CPU accounting: which processes kept how many cores busy."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from client.perf import cores_busy, cpu_seconds, cpu_snapshot

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="CPU accounting reads /proc (Linux)")


def test_a_busy_process_counts_about_one_core_and_a_sleeping_one_about_none():
    spin = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 3\nwhile time.time() < end: pass"])
    sleep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])
    try:
        time.sleep(0.5)  # past the interpreters' start-up
        groups = {"spinning": [spin.pid], "sleeping": [sleep.pid]}
        before, start = cpu_snapshot(groups), time.monotonic()
        time.sleep(1.5)
        cores = cores_busy(before, cpu_snapshot(groups), time.monotonic() - start)
    finally:
        spin.kill(), sleep.kill()
    assert cores["spinning"] > 0.5  # a core, less what other work on this machine took from it
    assert cores["sleeping"] < 0.1


def test_a_group_with_a_process_that_is_gone_is_left_out():
    no_such_pid = 2**22 + 1  # above Linux's largest process id
    assert cpu_seconds([os.getpid()]) > 0
    assert cpu_seconds([no_such_pid]) is None
    assert set(cpu_snapshot({"me": [os.getpid()], "nobody": [no_such_pid]})) == {"me"}
