"""The model alone, in-process: how fast it reads, and what each image costs in CPU time.

The served configurations are set against its best: the highest throughput for the plot, and the lowest
CPU seconds per image (over batch size, thread count and memory layout) for the serving efficiency.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm import tqdm

from str_ocr import load_model
from str_ocr.benchmark import time_model


def model_alone(checkpoint: Path | None, channels: int, batches: Sequence[int], threads: Sequence[int],
                seconds: float = 2.0) -> list[dict]:
    """A row per (threads, layout, batch size): images per second and CPU seconds per image."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(checkpoint, channels)
    settings = [(t, nhwc) for t in (threads if device == "cpu" else [torch.get_num_threads()]) for nhwc in (False, True)]
    rows, previous = [], torch.get_num_threads()
    try:
        for thread_count, nhwc in settings:
            torch.set_num_threads(thread_count)
            layout = "NHWC" if nhwc else "NCHW"
            for batch in tqdm(batches, desc=f"model alone ({thread_count} threads, {layout})", leave=False):
                timing = time_model(model, batch, seconds=seconds, device=device, channels_last=nhwc)
                rows.append({"batch_size": batch, "layout": layout, "threads": thread_count,
                             "images_per_second": timing.images_per_second,
                             "cpu_seconds_per_image": timing.cpu_seconds_per_image})
    finally:
        torch.set_num_threads(previous)
    return rows


def fastest(rows: Sequence[dict]) -> dict:
    return max(rows, key=lambda r: r["images_per_second"])


def cheapest(rows: Sequence[dict]) -> dict:
    """The setting that spends the least CPU time per image."""
    return min(rows, key=lambda r: r["cpu_seconds_per_image"])
