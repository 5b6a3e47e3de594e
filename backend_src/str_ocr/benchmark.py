"""Timing the recogniser alone, in-process: the reference that served throughput is compared with."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from .contract import INPUT_HEIGHT, TUTORIAL_WIDTH
from .engines import Engine, TorchEngine
from .model import STRModel


@dataclass(frozen=True)
class ModelTiming:
    images_per_second: float
    cpu_seconds_per_image: float
    """This process's CPU time (every thread's) per image: what the model costs, however busy the machine."""


def time_model(
    model: STRModel,
    batch_size: int,
    width: int = TUTORIAL_WIDTH,
    seconds: float = 2.0,
    device: str | torch.device = "cpu",
    channels_last: bool = False,
) -> ModelTiming:
    """Lines through ``model`` in torch at ``batch_size``, after a warm-up, for about ``seconds``."""
    return time_engine(TorchEngine(model, device, channels_last), batch_size, width, seconds)


@torch.inference_mode()
def time_engine(engine: Engine, batch_size: int, width: int = TUTORIAL_WIDTH, seconds: float = 2.0) -> ModelTiming:
    """Lines through ``engine`` (``str_ocr.engines``) at ``batch_size``, after a warm-up, for about ``seconds``."""
    lines = torch.rand(batch_size, 1, INPUT_HEIGHT, width, device=engine.device).mul_(2).sub_(1)
    synchronize = torch.cuda.synchronize if engine.device.type == "cuda" else (lambda: None)
    for _ in range(3):
        engine(lines, None)
    synchronize()
    runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds or runs < 3:
        engine(lines, None)
        synchronize()
        runs += 1
    images = runs * batch_size
    return ModelTiming(images / elapsed, (time.process_time() - cpu_start) / images)
