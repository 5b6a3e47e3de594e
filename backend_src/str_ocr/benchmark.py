"""Timing the recogniser alone, in-process: the reference that served throughput is compared with."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from .contract import INPUT_HEIGHT, TUTORIAL_WIDTH
from .model import STRModel


@dataclass(frozen=True)
class ModelTiming:
    images_per_second: float
    cpu_seconds_per_image: float
    """This process's CPU time (every thread's) per image: what the model costs, however busy the machine."""


@torch.inference_mode()
def time_model(
    model: STRModel,
    batch_size: int,
    width: int = TUTORIAL_WIDTH,
    seconds: float = 2.0,
    device: str | torch.device = "cpu",
    channels_last: bool = False,
) -> ModelTiming:
    """Lines through ``model`` at ``batch_size``, after a warm-up, for about ``seconds``."""
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(device, memory_format=memory_format).eval()
    lines = torch.rand(batch_size, 1, INPUT_HEIGHT, width, device=device).mul_(2).sub_(1)
    lines = lines.contiguous(memory_format=memory_format)
    synchronize = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    for _ in range(3):
        model(lines)
    synchronize()
    runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds or runs < 3:
        model(lines)
        synchronize()
        runs += 1
    images = runs * batch_size
    return ModelTiming(images / elapsed, (time.process_time() - cpu_start) / images)


def images_per_second(model: STRModel, batch_size: int, **options: object) -> float:
    """Lines per second through ``model`` at ``batch_size`` (``time_model``'s options)."""
    return time_model(model, batch_size, **options).images_per_second
