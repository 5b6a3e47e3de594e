"""Batched recognition of many requests at once, with a separate answer for each.

This is what a serving instance does with the requests Triton hands it: check each request on its
own, pack the good ones into as few forward passes as their widths allow, and give every request
back either its logits or the error that concerns it alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .contract import INPUT_HEIGHT, INPUT_NAME, MAX_WIDTH, MIN_WIDTH, OUTPUT_NAME, output_length  # noqa: F401
from .engines import Engine, TorchEngine
from .errors import InputError
from .model import STRModel
from .packing import ColumnCounts, column_counts, plan_groups, stack_padded
from .preprocess import LineLimits, normalize
from .text import Reading, greedy_decode

def check_request(lines: torch.Tensor, limits: LineLimits) -> None:
    """Raise ``InputError`` unless ``lines`` is a ``[N, 1, 32, W]`` FP32 batch within ``limits``."""
    expected = f"[batch, 1, {INPUT_HEIGHT}, width] FP32"
    if lines.dtype != torch.float32:
        raise InputError(f"{INPUT_NAME} must be {expected}; got dtype {str(lines.dtype).removeprefix('torch.')}")
    if lines.ndim != 4 or tuple(lines.shape[1:3]) != (1, INPUT_HEIGHT) or lines.shape[0] == 0:
        raise InputError(f"{INPUT_NAME} must be {expected}; got shape {list(lines.shape)}")
    width = lines.shape[3]
    if not limits.min_width <= width <= limits.max_width:
        raise InputError(
            f"{INPUT_NAME} is {width} pixels wide; this model takes widths from {limits.min_width} "
            f"to {limits.max_width}: resize the line to height {INPUT_HEIGHT} and a width in that range"
        )


def as_tensor(lines: np.ndarray | torch.Tensor) -> torch.Tensor:
    """A torch view of a request's input, without copying."""
    if isinstance(lines, torch.Tensor):
        return lines
    with warnings.catch_warnings():
        # Triton hands read-only buffers; the recogniser never writes to its inputs.
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(lines)


Result = torch.Tensor | Exception


@dataclass(frozen=True)
class ClampedLines:
    """Lines that held values the network was never meant to see: NaN or infinite, or finite beyond [-1, 1]."""

    nonfinite: int = 0
    out_of_range: int = 0

    def __add__(self, other: ClampedLines) -> ClampedLines:
        return ClampedLines(self.nonfinite + other.nonfinite, self.out_of_range + other.out_of_range)

    def __sub__(self, other: ClampedLines) -> ClampedLines:
        return ClampedLines(self.nonfinite - other.nonfinite, self.out_of_range - other.out_of_range)


def clamp_to_input_range(batch: torch.Tensor) -> ClampedLines:
    """Put every value of ``batch`` ``[N, 1, 32, W]`` into the normalised range [-1, 1], in place.

    A normalised line never leaves [-1, 1], but a client may send anything of the right type and
    shape (perf_analyzer's default random data hold NaN and infinite bit patterns). Triton's own
    backends serve such requests, so this one does too, with finite logits: NaN becomes 0 (mid-grey),
    and everything beyond the range, infinities included, its nearest end. Returns the lines it changed.
    """
    outside = ~(batch.abs() <= 1)  # NaN compares false, so it is outside too
    if not bool(outside.any()):
        return ClampedLines()
    per_line = outside.flatten(1).any(dim=1)
    nonfinite = (~torch.isfinite(batch)).flatten(1).any(dim=1)
    torch.nan_to_num_(batch, nan=0.0, posinf=1.0, neginf=-1.0).clamp_(-1.0, 1.0)
    return ClampedLines(int(nonfinite.sum()), int((per_line & ~nonfinite).sum()))


class Recognizer:
    """Runs an engine (``str_ocr.engines``; a ``STRModel`` is run by ``TorchEngine`` on the CPU) over a list of
    requests, each ``[N_i, 1, 32, W_i]``.

    ``max_padding`` bounds how much padding lines of different widths may share a batch with
    (0.25: at most a quarter more columns than the lines really have). ``max_lines`` caps the
    lines in one forward pass.
    """

    def __init__(
        self,
        engine: Engine | STRModel,
        limits: LineLimits = LineLimits(),
        max_padding: float = 0.25,
        max_lines: int | None = None,
    ) -> None:
        self.engine = TorchEngine(engine) if isinstance(engine, STRModel) else engine
        self.device = self.engine.device
        self.limits = limits
        self.max_padding = max_padding
        self.max_lines = max_lines
        self.columns = ColumnCounts()
        """Columns computed so far, padding included (a served model exports them as a metric)."""
        self.clamped = ClampedLines()
        """Lines whose values had to be put back into [-1, 1] so far (exported as a metric too)."""

    def __call__(self, requests: Sequence[np.ndarray | torch.Tensor]) -> list[Result]:
        """Logits ``[N_i, W_i // 4 + 1, 37]`` on ``self.device`` per request, or the exception for that request."""
        results: list[Result | None] = [None] * len(requests)
        valid: list[int] = []
        tensors: list[torch.Tensor] = []
        for i, request in enumerate(requests):
            try:
                lines = as_tensor(request)
                check_request(lines, self.limits)
            except (InputError, TypeError, ValueError) as error:
                results[i] = error if isinstance(error, InputError) else InputError(str(error))
                continue
            valid.append(i)
            tensors.append(lines)
        widths = [t.shape[3] for t in tensors]
        counts = [t.shape[0] for t in tensors]
        groups = plan_groups(widths, counts, self.max_padding, self.max_lines)
        self.columns += column_counts(groups, widths, counts)
        for group in groups:
            members = [tensors[k] for k in group.members]
            for k, result in zip(group.members, self._run_group(members, group.width)):
                results[valid[k]] = result
        if self.device.type == "cuda":
            # CUDA kernels run asynchronously, and whoever takes the logits next (Triton, through a
            # DLPack capsule that carries no stream) may read them from another process without
            # waiting on this one's stream: hand them over finished.
            torch.cuda.synchronize(self.device)
        return results  # type: ignore[return-value]

    def read(self, lines: Sequence[np.ndarray]) -> list[Reading]:
        """What grey ``[32, W]`` uint8 lines say (in-process, the way the served model reads them)."""
        requests = [normalize(line)[np.newaxis, np.newaxis] for line in lines]
        readings = []
        for result in self(requests):
            if isinstance(result, Exception):
                raise result
            readings.append(greedy_decode(result[0].float().cpu().numpy()))
        return readings

    @torch.inference_mode()
    def _run_group(self, requests: list[torch.Tensor], width: int) -> list[Result]:
        try:
            batch = stack_padded([r.to(self.device, non_blocking=True) for r in requests], width)
            self.clamped += clamp_to_input_range(batch)
            widths = None
            if any(r.shape[3] != width for r in requests):
                real = [r.shape[3] for r in requests for _ in range(r.shape[0])]
                widths = torch.tensor(real, device=self.device)
            logits = self.engine(batch, widths)
        except Exception as error:  # out of memory, a broken device: fail these requests, not the instance
            return [RuntimeError(f"recognition failed: {error}") for _ in requests]
        results: list[Result] = []
        start = 0
        for request in requests:
            stop = start + request.shape[0]
            results.append(logits[start:stop, : output_length(request.shape[3])])
            start = stop
        return results
