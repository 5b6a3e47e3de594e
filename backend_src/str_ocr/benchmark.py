"""Timing the recogniser alone, in-process: the reference that served throughput is compared with."""

from __future__ import annotations

import time

import torch

from .model import INPUT_HEIGHT, STRModel
from .preprocess import TUTORIAL_WIDTH


@torch.inference_mode()
def images_per_second(
    model: STRModel,
    batch_size: int,
    width: int = TUTORIAL_WIDTH,
    seconds: float = 2.0,
    device: str | torch.device = "cpu",
    channels_last: bool = False,
) -> float:
    """Lines per second through ``model`` at ``batch_size``, after a warm-up, for about ``seconds``."""
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(device, memory_format=memory_format).eval()
    lines = torch.rand(batch_size, 1, INPUT_HEIGHT, width, device=device).mul_(2).sub_(1)
    lines = lines.contiguous(memory_format=memory_format)
    synchronize = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    for _ in range(3):
        model(lines)
    synchronize()
    runs, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or runs < 3:
        model(lines)
        synchronize()
        runs += 1
    return runs * batch_size / elapsed
