"""The engines a recogniser runs on: torch (eager), ONNX Runtime and OpenVINO, over the same weights.

Every engine takes a zero-padded batch ``[N, 1, 32, W]`` and, when lines of different widths share it, each line's
real width ``[N]``, and returns the logits ``[N, W // 4 + 1, 37]``, each line's equal to its logits alone. ONNX
Runtime and OpenVINO run the project's own export of the weights (``str_ocr.graphs``): one graph for batches of one
width, and one that takes the widths as a second input and masks the columns past each line inside the graph.

| engine        | devices | precisions  |
| ------------- | ------- | ----------- |
| ``torch``     | CPU, GPU | f32        |
| ``onnxruntime`` | CPU   | f32         |
| ``openvino``  | CPU     | f32, bf16 (where the CPU has it natively) |

``auto`` (``choose_engine``, ``choose_precision``) picks OpenVINO in bf16 on a CPU with native bf16, ONNX Runtime
on another CPU, torch on a GPU: the fastest engine of each whose word accuracy is within a few tenths of a point
of f32's (``docs/model.md``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Protocol

import torch

from .contract import ENGINES, INPUT_NAME, PRECISIONS, WIDTHS_NAME
from .cpu_features import native_bf16
from .model import STRModel

__all__ = ["ENGINES", "PRECISIONS", "Engine", "TorchEngine", "OnnxRuntimeEngine", "OpenVinoEngine", "available",
           "native_bf16", "choose_engine", "choose_precision", "build_engine"]


class Engine(Protocol):
    device: torch.device

    def __call__(self, batch: torch.Tensor, widths: torch.Tensor | None) -> torch.Tensor: ...


class TorchEngine:
    """The model in torch's eager mode, on any device; ``channels_last``: NHWC convolutions (faster on CPUs)."""

    name = "torch"

    def __init__(self, model: STRModel, device: torch.device | str = "cpu", channels_last: bool = False) -> None:
        self.device = torch.device(device)
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.model = model.to(self.device, memory_format=self.memory_format).eval()

    @torch.inference_mode()
    def __call__(self, batch: torch.Tensor, widths: torch.Tensor | None) -> torch.Tensor:
        return self.model(batch.contiguous(memory_format=self.memory_format), widths)


class OnnxRuntimeEngine:
    """ONNX Runtime's CPU provider with ``threads`` intra-op threads."""

    name = "onnxruntime"

    def __init__(self, graphs: dict[str, Path], threads: int) -> None:
        import onnxruntime  # noqa: PLC0415 - only this engine needs it

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        self.sessions = {kind: onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                         for kind, path in graphs.items()}
        self.device = torch.device("cpu")

    def __call__(self, batch: torch.Tensor, widths: torch.Tensor | None) -> torch.Tensor:
        feed = {INPUT_NAME: batch.contiguous().numpy()}
        if widths is not None:
            feed[WIDTHS_NAME] = widths.to(torch.int64).numpy()
        (logits,) = self.sessions["plain" if widths is None else "masked"].run(None, feed)
        return torch.from_numpy(logits)


class OpenVinoEngine:
    """OpenVINO on the CPU with ``threads`` threads, in f32 or (where the CPU has it natively) bf16."""

    name = "openvino"

    def __init__(self, graphs: dict[str, Path], threads: int, precision: str = "f32") -> None:
        import openvino  # noqa: PLC0415 - only this engine needs it

        core = openvino.Core()
        if precision == "bf16" and not native_bf16():
            raise ValueError("precision 'bf16' needs a CPU with native bf16 (AVX512_BF16 or AMX); this one has "
                             "none: use precision 'auto' or 'f32'")
        # No pinning: two instances of one thread each would otherwise both pin to the first core.
        settings = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": precision,
                    "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1, "ENABLE_CPU_PINNING": False}
        self.models = {kind: core.compile_model(str(path), "CPU", settings) for kind, path in graphs.items()}
        self.device = torch.device("cpu")

    def __call__(self, batch: torch.Tensor, widths: torch.Tensor | None) -> torch.Tensor:
        inputs = [batch.contiguous().numpy()]
        if widths is not None:
            inputs.append(widths.to(torch.int64).numpy())
        model = self.models["plain" if widths is None else "masked"]
        return torch.from_numpy(model(inputs)[0])  # a copy of its own: outputs are not shared by default


def available(engine: str) -> bool:
    """Whether ``engine``'s package is installed here, with the exporter that makes its graphs."""
    needed = [] if engine == "torch" else [engine, "onnx", "onnxscript"]
    return all(importlib.util.find_spec(name) is not None for name in needed)


def choose_engine(requested: str, device: torch.device, precision: str = "auto") -> str:
    """``requested``, or for ``auto`` the fastest engine of this instance that reads as f32 does (the module
    docstring): on a CPU with native bf16, OpenVINO (unless ``precision`` asks for f32); on another CPU, ONNX
    Runtime; on a GPU, torch."""
    if requested == "auto":
        if device.type != "cpu":
            return "torch"
        if precision == "bf16" or (precision == "auto" and available("openvino") and native_bf16()):
            return "openvino"  # for bf16 asked for where it cannot run, OpenVINO says what to change
        return "onnxruntime" if available("onnxruntime") else "torch"
    if requested not in ENGINES:
        raise ValueError(f"engine must be auto or one of {', '.join(ENGINES)}; got {requested!r}")
    if requested != "torch" and device.type != "cpu":
        raise ValueError(f"engine {requested!r} runs on CPU instances only: use engine 'torch' (or 'auto') on a GPU")
    if not available(requested):
        raise ValueError(f"engine {requested!r} is not installed here (pip install {requested}), or use 'auto'")
    return requested


def choose_precision(requested: str, engine: str) -> str:
    """``requested``, or for ``auto``: bf16 on OpenVINO where the CPU has it natively, else f32."""
    if requested != "auto":
        return requested
    return "bf16" if engine == "openvino" and native_bf16() else "f32"


def build_engine(model: STRModel, engine: str, device: torch.device, threads: int, precision: str = "f32",
                 channels_last: bool = False) -> Engine:
    """The engine ``engine`` (``choose_engine``'s answer) running ``model``'s weights in ``precision``
    (``choose_precision``'s)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    if precision != "f32" and engine != "openvino":
        raise ValueError(f"precision {precision!r} is offered by engine 'openvino' only; {engine!r} runs f32")
    if engine == "torch":
        return TorchEngine(model, device, channels_last)
    from .graphs import exported_graphs  # noqa: PLC0415 - the exporter's imports are heavy; torch needs none

    graphs = exported_graphs(model)
    if engine == "onnxruntime":
        return OnnxRuntimeEngine(graphs, threads)
    return OpenVinoEngine(graphs, threads, precision)
