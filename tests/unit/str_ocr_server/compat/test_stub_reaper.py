"""The library the launcher preloads into tritonserver to reap replaced stubs, tried on a Python process in its
place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from str_ocr_server.compat.stub_reaper import LIBRARY, StubReaper
from str_ocr_server.compat.stubs import stat_fields

# Stands in for tritonserver: two children, one that dies (a crashed stub) and one that lives; prints their pids,
# then, told to, does what the backend would do to a stub it destroys: SIGKILL it and wait for it.
SERVER = textwrap.dedent("""
    import ctypes, os, signal, sys, threading, time
    print("LD_PRELOAD" in os.environ, flush=True)
    dead = os.fork()
    if dead == 0:  # as a stub dies: its main thread first (a zombie from then on), its other threads after
        threading.Thread(target=lambda: (time.sleep(1), os._exit(7))).start()
        ctypes.CDLL(None).pthread_exit(None)
    living = os.fork()
    if living == 0:
        signal.pause()
    print(dead, living, flush=True)
    sys.stdin.readline()
    for pid in (dead, living):
        os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
        print(os.waitstatus_to_exitcode(status), flush=True)
""")


def wait_for(condition, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def server():
    if not LIBRARY.is_file():
        pytest.fail(f"{LIBRARY} is not built: `make setup` builds it")
    reaper = StubReaper()
    process = subprocess.Popen([sys.executable, "-c", SERVER], env=reaper.environment({"LD_PRELOAD": ""}),
                               pass_fds=reaper.pass_fds, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    reaper.started()
    yield reaper, process
    reaper.release()
    kill_with_children(process)


def kill_with_children(process: subprocess.Popen) -> None:
    """The server and the children it forked (its group): a child left paused would outlive the tests."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_the_server_waits_for_a_dead_child_it_is_told_of_and_for_no_living_one(server):
    reaper, process = server
    assert process.stdout.readline().strip() == "False", "the server's children must not inherit the library"
    dead, living = map(int, process.stdout.readline().split())
    assert wait_for(lambda: stat_fields(dead)[0] == "Z")
    reaper.reap([1, dead])  # 1: not the server's child
    assert wait_for(lambda: stat_fields(dead) is None), "the dead child is still a zombie"
    assert stat_fields(living)[0] != "Z"
    # What the backend does when it destroys an instance: the reaped pid answers as the zombie would have.
    process.stdin.write("destroy\n")
    process.stdin.flush()
    assert [process.stdout.readline().strip() for _ in range(2)] == ["7", "-9"]


def test_without_the_library_a_dead_child_stays_a_zombie():
    process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        process.stdout.readline()
        dead, _ = map(int, process.stdout.readline().split())
        time.sleep(0.5)
        assert stat_fields(dead)[0] == "Z"
    finally:
        kill_with_children(process)
