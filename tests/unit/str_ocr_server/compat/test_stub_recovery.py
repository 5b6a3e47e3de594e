"""The watchdog: a stub death seen however early it happens, and a recovery that cannot succeed stops the server."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from str_ocr_server.compat import stub_recovery as watchdog
from str_ocr_server.compat.stubs import Stub, is_alive
from str_ocr_server.metrics import LauncherMetrics


class Unreachable:
    """A server whose HTTP API answers nothing (status 0), as one that hangs would."""

    def call(self, path: str, body: object = None, timeout: float = 5.0) -> tuple[int, None]:
        return 0, None

    def config(self, model: str) -> None:
        return None


def test_a_model_that_cannot_be_recovered_stops_the_server(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(watchdog, "BACKOFF", 0.01)
    server = subprocess.Popen(["sleep", "60"])  # stands for tritonserver: what matters is that it gets SIGTERM
    logged: list[str] = []
    try:
        dog = watchdog.Watchdog(Unreachable(), server.pid, tmp_path, {"text_recognition": 2}, readiness=None,
                                interval=0.1, log=logged.append, metrics=LauncherMetrics(["text_recognition"]))
        dog.recover("text_recognition")
        assert server.wait(5) == -15  # SIGTERM
    finally:
        server.kill()
    assert sum("loading text_recognition again failed" in line for line in logged) == watchdog.ATTEMPTS
    assert "could not be recovered in 3 attempts: stopping tritonserver" in logged[-1]


def test_the_server_reported_counts_give_each_gpu_its_own_instances():
    assert watchdog.served_instances({"instance_group": [{"kind": "KIND_CPU", "count": 2}]}) == 2
    assert watchdog.served_instances({"instance_group": [{"kind": "KIND_GPU", "count": 2, "gpus": [0, 1]},
                                                         {"kind": "KIND_CPU", "count": 1}]}) == 5
    assert watchdog.served_instances({}) == 1


@pytest.fixture
def two_stubs(monkeypatch, tmp_path: Path):
    """A watchdog over a model of two instances whose stubs are real processes, as the server reports them."""
    processes = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    stubs = [Stub(p.pid, "text_recognition", f"text_recognition_0_{i}") for i, p in enumerate(processes)]
    monkeypatch.setattr(watchdog, "living_stubs", lambda *_: [s for s in stubs if is_alive(s.pid)])
    dog = watchdog.Watchdog(Unreachable(), os.getpid(), tmp_path, {"text_recognition": 2}, readiness=None, interval=0.1,
                            log=print, metrics=LauncherMetrics(["text_recognition"]))
    yield dog, processes, stubs
    for process in processes:
        process.kill()
        process.wait()


def kill(process: subprocess.Popen) -> None:
    process.kill()
    while is_alive(process.pid):  # a zombie now: not waited for, as the server does not wait for a dead stub
        time.sleep(0.01)


def test_a_watched_stub_that_dies_is_a_death(two_stubs):
    dog, processes, stubs = two_stubs
    dog.adopt({"text_recognition"})
    assert dog._deaths() == {} and dog._short() == {"text_recognition": 0}
    kill(processes[1])
    assert dog._deaths() == {"text_recognition": [stubs[1]]}
    dog.recovering.add("text_recognition")
    assert dog._deaths() == {}, "a model being recovered is not reported again"


def test_a_stub_that_exited_cleanly_is_given_time_to_be_reaped_before_it_is_a_death(two_stubs, monkeypatch):
    """A stub the server stops in order exits 0 and is a zombie until the server waits for it, moments later."""
    monkeypatch.setattr(watchdog, "REAP_GRACE", 0.5)
    dog, processes, stubs = two_stubs
    clean = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)  # exits 0 at end of input
    try:
        stubs[0] = Stub(clean.pid, "text_recognition", "text_recognition_0_0")
        dog.adopt({"text_recognition"})
        assert clean.pid in dog.watched
        clean.stdin.close()
        while is_alive(clean.pid):
            time.sleep(0.01)
        assert dog._deaths() == {}, "a clean exit not yet reaped was taken for a death"
        time.sleep(0.6)
        assert dog._deaths() == {"text_recognition": [stubs[0]]}, "a clean exit never reaped is a death all the same"
    finally:
        clean.kill()
        clean.wait()


def test_a_stub_that_died_before_the_first_look_leaves_its_model_short(two_stubs):
    """A zombie's command line is empty: nothing names its model, only the count of living stubs falls short."""
    dog, processes, _ = two_stubs
    kill(processes[0])
    dog.adopt({"text_recognition"})
    assert dog._short() == {"text_recognition": 1}


def test_stubs_the_server_stopped_in_order_are_replaced_not_mourned(two_stubs):
    """An operator's load: the new version's stubs start, the old ones are stopped and reaped by the server."""
    dog, processes, stubs = two_stubs
    dog.adopt({"text_recognition"})
    new = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    processes += new
    stubs[:] = [Stub(p.pid, "text_recognition", f"text_recognition_0_{i}") for i, p in enumerate(new)]
    for process in processes[:2]:
        process.kill()
        process.wait()  # reaped: gone from /proc, as a stub the server stopped
    assert dog._deaths() == {}
    assert set(dog.watched) == {p.pid for p in new}


def test_only_the_servers_dead_children_are_handed_to_the_reaper(two_stubs):
    dog, processes, _ = two_stubs
    reaped: list[int] = []
    dog.reap = reaped.extend
    kill(processes[0])
    dog._reap_when_dead([processes[0].pid, processes[1].pid, 1], timeout=0.3)  # 1: not the server's child
    assert reaped == [processes[0].pid], "a living stub or another process was handed to the reaper"
    kill(processes[1])
    dog._reap_when_dead([processes[1].pid], timeout=5)
    assert reaped == [processes[0].pid, processes[1].pid]
