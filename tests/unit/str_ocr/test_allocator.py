"""The training run's data processes under jemalloc: they return what they free, as the trainer need not."""

import ctypes.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from str_ocr import allocator, training

JEMALLOC = ctypes.util.find_library("jemalloc")
NO_JEMALLOC = "no jemalloc on this machine (Debian's libjemalloc2, which make setup installs)"
REPOSITORY = Path(__file__).parents[3]
NEVER_PURGE = "dirty_decay_ms:-1,muzzy_decay_ms:-1"
SETTINGS = ["arenas.dirty_decay_ms", "arenas.muzzy_decay_ms", "arena.0.dirty_decay_ms", "arena.0.muzzy_decay_ms"]
# The trainer's own data loader lends its worker_init_fn to a loader whose one data process reports its settings.
SCRIPT = f"""
import json, torch
from torch.utils.data import DataLoader, IterableDataset
from str_ocr import training
from str_ocr.allocator import decay_ms

class Settings(IterableDataset):
    def __iter__(self):
        yield {{name: decay_ms(name) for name in {SETTINGS!r}}}

args = training.parse_args(["--workers", "1", "--batch-size", "2", "--device", "cpu"])
trainers = training._batches(args, 0, torch.device("cpu"))
loader = DataLoader(Settings(), batch_size=None, num_workers=1, worker_init_fn=trainers.worker_init_fn)
print(json.dumps({{"trainer": next(iter(Settings())), "data process": next(iter(loader)),
                  "warning": training.allocator_warning(torch.device("cpu"))}}))
"""


@pytest.mark.skipif(JEMALLOC is None, reason=f"{NO_JEMALLOC}: nothing to give back")
def test_the_trainers_data_process_gets_jemallocs_default_decay_back_and_the_trainer_keeps_its_own():
    path = os.pathsep.join(filter(None, [str(Path(allocator.__file__).parents[1]), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": path, "LD_PRELOAD": JEMALLOC, "MALLOC_CONF": NEVER_PURGE})
    assert done.returncode == 0, done.stderr[-2000:]
    reported = json.loads(done.stdout.strip().splitlines()[-1])
    assert reported["trainer"] == dict.fromkeys(SETTINGS, -1)
    assert reported["data process"] == dict.fromkeys(SETTINGS, allocator.JEMALLOC_DEFAULT_DECAY_MS)
    assert reported["warning"] is None


@pytest.mark.skipif(JEMALLOC is None, reason=f"{NO_JEMALLOC}: make train runs the trainer under glibc's allocator")
def test_make_train_runs_the_trainer_under_jemalloc_keeping_what_it_frees():
    # Under make test this make is a sub-make: without its parent's settings it prints only the recipes.
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    recipe = subprocess.run(["make", "-n", "train", "TRAIN_ARGS=--steps 1"], cwd=REPOSITORY, capture_output=True,
                            text=True, timeout=60, check=True, env=environment).stdout.splitlines()[-1]
    variables = dict(word.split("=", 1) for word in recipe.split() if "=" in word and not word.startswith("-"))
    assert Path(variables["LD_PRELOAD"]).name == "libjemalloc.so.2" and Path(variables["LD_PRELOAD"]).exists()
    assert variables["MALLOC_CONF"] == NEVER_PURGE
    assert recipe.endswith("scripts/train.py --steps 1")


def test_without_jemalloc_nothing_is_changed():
    if allocator.decay_ms("arenas.dirty_decay_ms") is not None:
        pytest.skip("this test process runs under jemalloc: there is no process without it to check")
    assert allocator.purge_freed_memory() is False
    assert allocator.keeps_freed_memory() is False
    assert "jemalloc" in training.allocator_warning(torch.device("cpu"))
    assert training.allocator_warning(torch.device("cuda")) is None
