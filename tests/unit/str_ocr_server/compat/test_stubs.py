"""The pure parts of the stub watch and the readiness model."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from str_ocr_server.compat.not_ready import READINESS_MODEL, wrapper_config
from str_ocr_server.compat.stubs import (REGION_PREFIX, SHM, Stub, group_members, is_alive, kill_session, parse_stub,
                                         remove_region)

CONFIG = {
    "name": "text_recognition", "max_batch_size": 32,
    "input": [{"name": "input.1", "data_type": "TYPE_FP32", "dims": [1, 32, -1], "allow_ragged_batch": True}],
    "output": [{"name": "308", "data_type": "TYPE_FP32", "dims": [-1, 37]}],
    "instance_group": [{"name": "text_recognition_0", "kind": "KIND_CPU", "count": 2}],
}


def test_ready_again_loads_a_one_step_ensemble_over_a_served_model():
    config = wrapper_config(CONFIG)
    assert config["name"] == READINESS_MODEL and config["platform"] == "ensemble" and config["max_batch_size"] == 32
    step = config["ensemble_scheduling"]["step"][0]
    assert step["model_name"] == "text_recognition"
    assert step["input_map"] == {"input.1": "input.1"} and step["output_map"] == {"308": "308"}
    assert config["input"][0]["dims"] == [1, 32, -1]


def test_a_process_that_is_not_a_stub_is_not_taken_for_one_and_a_zombie_is_dead(tmp_path):
    assert parse_stub(os.getpid(), tmp_path) is None
    child = subprocess.Popen(["true"])
    while is_alive(child.pid):  # exits, and stays a zombie until waited for
        pass
    assert not is_alive(child.pid)
    child.wait()
    assert not is_alive(child.pid)


def test_only_a_python_backend_region_is_removed_and_only_from_dev_shm():
    region = SHM / f"{REGION_PREFIX}unit-test-{os.getpid()}"
    region.write_bytes(b"\0" * 16)
    try:
        assert remove_region(Stub(1, "m", "m_0_0", region.name)) and not region.exists()
        assert not remove_region(Stub(1, "m", "m_0_0", region.name)), "already gone"
    finally:
        region.unlink(missing_ok=True)
    for name in ["", "other_region", f"{REGION_PREFIX}/../../etc/passwd", f"../{REGION_PREFIX}x"]:
        assert not remove_region(Stub(1, "m", "m_0_0", name))


def test_what_outlives_a_dead_server_in_its_session_is_killed_even_if_it_ignores_sigterm():
    # The leader stands for tritonserver, its child for a stub stuck after the server died, deaf to SIGTERM.
    stuck = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
             "print(os.getpid(), flush=True); time.sleep(60)")
    leader = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "{stuck}" & wait'], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    stub = int(leader.stdout.readline())
    leader.kill()
    leader.wait()
    assert group_members(leader.pid) == [stub]
    assert kill_session(leader.pid) == 1
    assert not is_alive(stub), "kill_session returned before the stuck process had died"
    assert kill_session(leader.pid) == 0


def test_a_session_of_zombies_only_is_left_to_be_reaped():
    leader = subprocess.Popen(["true"], start_new_session=True)
    while is_alive(leader.pid):
        time.sleep(0.01)
    assert group_members(leader.pid) == [] and kill_session(leader.pid) == 0
    leader.wait()
