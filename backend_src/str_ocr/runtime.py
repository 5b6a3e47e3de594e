"""Where an instance runs, and how many CPU threads it may take.

Each Triton model instance is its own process with its own torch thread pool. Left at torch's
default, every CPU instance takes every core and they fight over them: two instances of the
512-channel model on a 2-core machine fell from 24 to 7 images per second. So CPU instances
share the cores out between them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def available_cores() -> int:
    """Cores this process may run on (respects CPU affinity and container cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def threads_per_cpu_instance(cpu_instances: int, cores: int | None = None) -> int:
    """An equal share of the cores for each CPU instance, at least one thread."""
    cores = available_cores() if cores is None else cores
    return max(1, cores // max(1, cpu_instances))


def configure_threads(threads: int) -> None:
    """Use ``threads`` intra-op threads and one inter-op thread (the model is one sequential graph)."""
    import torch  # noqa: PLC0415 - the page models share out cores without loading torch

    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started in this process
        pass


def instance_device(kind: str, device_id: int = 0) -> torch.device:
    """The torch device for a Triton instance of ``kind`` ("CPU" or "GPU", as the Python backend names them)."""
    import torch  # noqa: PLC0415

    if kind.upper().removeprefix("KIND_") != "GPU":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError(
            "this instance is KIND_GPU but torch sees no CUDA device: install a CUDA build of torch, "
            "or set instance_group kind: KIND_CPU"
        )
    return torch.device("cuda", device_id)
