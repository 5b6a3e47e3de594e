"""The model alone, in-process, on every engine this machine has: how fast it reads, and what each image costs in
CPU time.

The served configurations are set against its best: the highest throughput for the plot, and the lowest
CPU seconds per image (over engine, batch size and thread count) for the serving efficiency.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm import tqdm

from str_ocr import load_model
from str_ocr.benchmark import time_engine
from str_ocr.engines import available, build_engine, native_bf16

ENGINE_SETTINGS = {  # label: (engine, precision, channels_last)
    "torch NCHW": ("torch", "f32", False),
    "torch NHWC": ("torch", "f32", True),
    "onnxruntime": ("onnxruntime", "f32", False),
    "openvino f32": ("openvino", "f32", False),
    "openvino bf16": ("openvino", "bf16", False),
}


def engines_here(device: torch.device) -> dict[str, tuple[str, str, bool]]:
    """The settings this machine can run: torch only on a GPU; bf16 only on a CPU that has it natively."""
    usable = {label: s for label, s in ENGINE_SETTINGS.items() if available(s[0])}
    if device.type != "cpu":
        return {label: s for label, s in usable.items() if s[0] == "torch"}
    if "openvino bf16" in usable and not native_bf16():
        del usable["openvino bf16"]
    return usable


def model_alone(checkpoint: Path | None, channels: int, batches: Sequence[int], threads: Sequence[int],
                seconds: float = 2.0) -> list[dict]:
    """A row per (engine, threads, batch size): images per second and CPU seconds per image, on every engine
    setting of ``ENGINE_SETTINGS`` this machine runs."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(checkpoint, channels)
    settings = engines_here(device)
    rows, previous = [], torch.get_num_threads()
    try:
        for thread_count in threads if device.type == "cpu" else [previous]:
            torch.set_num_threads(thread_count)
            for label, (engine, precision, nhwc) in settings.items():
                runner = build_engine(model, engine, device, thread_count, precision, nhwc)
                for batch in tqdm(batches, desc=f"model alone ({label}, {thread_count} threads)", leave=False):
                    timing = time_engine(runner, batch, seconds=seconds)
                    rows.append({"batch_size": batch, "engine": label, "threads": thread_count,
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
