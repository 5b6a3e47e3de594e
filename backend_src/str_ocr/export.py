"""ONNX export of the recogniser with the tutorial's tensor names, checked, and compared with PyTorch.

The comparison judges as ONNX exporters' own checks do: every logit within ``atol + rtol * |logit|``
(``numpy.testing.assert_allclose``), with ``atol`` scaled to the largest logit, because float rounding
grows with the values rounded (a 512-channel checkpoint's logits reach the hundreds), and the decoded
text of every test line identical. The test lines are real synthetic text lines and uniform noise.
``scripts/export_onnx.py`` is its command line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
from tqdm import tqdm

from .checkpoint import load_model
from .model import INPUT_HEIGHT, MIN_WIDTH
from .preprocess import TUTORIAL_WIDTH, normalize
from .contract import INPUT_NAME, OUTPUT_NAME, WIDTHS_NAME
from .synth import TextLineSynth
from .text import greedy_decode_batch

OPSET = 18
MAX_WIDTH = 4096
RTOL = 1e-3
"""ONNX's backend tests' relative tolerance."""
ATOL_SCALE = 1e-5
"""Absolute tolerance as a fraction of the largest absolute logit (1e-4 for logits of 10, 8e-3 for 800)."""
DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "model_repository_onnx/text_recognition_onnx/1/model.onnx"


class ExportError(RuntimeError):
    """The exporter failed, or its model gives other shapes than PyTorch's."""


class _WithWidths(torch.nn.Module):
    """The model with each line's real width as a second input: the mask that makes packing exact, in the graph."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, lines: torch.Tensor, widths: torch.Tensor) -> torch.Tensor:
        return self.model(lines, widths)


def export(model: torch.nn.Module, output: Path, dynamic_width: bool, opset: int = OPSET,
           with_widths: bool = False) -> None:
    """Write ``model`` as ONNX with a dynamic batch axis and, optionally, width axis; ``with_widths``: a second
    input ``widths`` [batch] INT64 (each line's real width), with a dynamic width."""
    example = torch.zeros(2, 1, INPUT_HEIGHT, TUTORIAL_WIDTH)
    batch = torch.export.Dim("batch", min=1, max=1024)
    axes = {0: batch}
    if dynamic_width or with_widths:
        axes[3] = torch.export.Dim("width", min=MIN_WIDTH, max=MAX_WIDTH)
    arguments, names, shapes = (example,), [INPUT_NAME], (axes,)
    if with_widths:
        model = _WithWidths(model)
        arguments, names, shapes = ((example, torch.tensor([TUTORIAL_WIDTH, 60])), [INPUT_NAME, WIDTHS_NAME],
                                    (axes, {0: batch}))
    output.parent.mkdir(parents=True, exist_ok=True)
    # The exporter narrates each stage and warns about torchvision ops this model does not use.
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, arguments, str(output), input_names=names, output_names=[OUTPUT_NAME],
                          dynamic_shapes=shapes, opset_version=opset, dynamo=True, external_data=False)
    # The exporter writes its own opset, with a warning, when it cannot convert the graph to the one asked for.
    imports = onnx.load(str(output), load_external_data=False).opset_import
    written = next(o.version for o in imports if o.domain in ("", "ai.onnx"))
    if written != opset:
        raise ExportError(f"asked for opset {opset}, but the exporter could not express the model in it "
                          f"and wrote opset {written}")


def parity_batches(batch_sizes: Sequence[int], widths: Sequence[int], seed: int = 0) -> list[np.ndarray]:
    """For each batch size and width: a batch of synthetic text lines, and one of uniform noise."""
    synth, noise = TextLineSynth(seed, "core"), np.random.default_rng(seed)
    batches = []
    for width in widths:
        for size in batch_sizes:
            lines = [normalize(synth.sample(width, max_chars=max(1, width // 10)).image) for _ in range(size)]
            batches.append(np.stack(lines)[:, np.newaxis])
            batches.append(noise.uniform(-1, 1, (size, 1, INPUT_HEIGHT, width)).astype(np.float32))
    return batches


@dataclass
class Parity:
    """How ONNX Runtime's logits compare with PyTorch's over some batches."""

    rtol: float
    atol: float
    largest_logit: float = 0.0
    max_abs: float = 0.0
    max_rel: float = 0.0
    """The largest ``|onnx - torch| / |torch|`` over non-zero logits, as ``assert_allclose`` reports it."""
    outside: int = 0
    """Logits beyond ``atol + rtol * |torch|``."""
    logits: int = 0
    lines: int = 0
    texts_differ: list[tuple[str, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outside == 0 and not self.texts_differ

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return (f"{verdict}: largest difference {self.max_abs:.2e} absolute, {self.max_rel:.2e} relative "
                f"(largest logit {self.largest_logit:.3g}); {self.outside} of {self.logits} logits beyond "
                f"atol {self.atol:.1e} + rtol {self.rtol:.0e} x |logit|; "
                f"{self.lines - len(self.texts_differ)} of {self.lines} lines decode to the same text")


def compare(model: torch.nn.Module, path: Path, batches: Sequence[np.ndarray], rtol: float = RTOL,
            atol_scale: float = ATOL_SCALE) -> Parity:
    """ONNX Runtime's logits against PyTorch's on ``batches``, judged as ``assert_allclose(rtol, atol)``."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    pairs = []
    for lines in batches:
        (ours,) = session.run([OUTPUT_NAME], {INPUT_NAME: lines})
        with torch.inference_mode():
            reference = model(torch.from_numpy(lines)).numpy()
        if ours.shape != reference.shape:
            raise ExportError(f"ONNX gives {list(ours.shape)} for {list(lines.shape)}, PyTorch {list(reference.shape)}")
        pairs.append((ours, reference))
    largest = max(float(np.abs(reference).max()) for _, reference in pairs)
    parity = Parity(rtol=rtol, atol=atol_scale * largest, largest_logit=largest)
    for ours, reference in pairs:
        difference = np.abs(ours.astype(np.float64) - reference)
        nonzero = reference != 0
        parity.max_abs = max(parity.max_abs, float(difference.max()))
        if nonzero.any():
            parity.max_rel = max(parity.max_rel, float((difference[nonzero] / np.abs(reference[nonzero])).max()))
        parity.outside += int((difference > parity.atol + rtol * np.abs(reference)).sum())
        parity.logits += reference.size
        texts = zip(greedy_decode_batch(ours), greedy_decode_batch(reference))
        for a, b in texts:
            parity.lines += 1
            if a.text != b.text:
                parity.texts_differ.append((a.text, b.text))
    return parity


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Export the recogniser to ONNX, check it, compare it with PyTorch.")
    parser.add_argument("--checkpoint", type=Path,
                        help="weights in either format load_model reads (default: the shipped ones)")
    parser.add_argument("--output-channels", type=int, help="recogniser width (default: the shipped model's, 64)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    parser.add_argument("--dynamic-width", action="store_true", help="make the width axis dynamic too")
    parser.add_argument("--opset", type=int, default=OPSET, help="ONNX opset (default: %(default)s)")
    parser.add_argument("--check-batches", type=int, nargs="+", default=[1, 5, 8], metavar="N",
                        help="batch sizes compared, each with text lines and with noise (default: 1 5 8)")
    parser.add_argument("--rtol", type=float, default=RTOL, help="relative tolerance (default: %(default)s)")
    parser.add_argument("--atol-scale", type=float, default=ATOL_SCALE,
                        help="absolute tolerance, as a fraction of the largest absolute logit (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None,
         shipped_weights: Callable[[], tuple[Path | None, int]] | None = None) -> int:
    """Export, check and compare; without ``--checkpoint``, the checkpoint and width ``shipped_weights()`` names."""
    args = parse_args(argv)
    if args.checkpoint is None:
        if shipped_weights is None:
            raise SystemExit("export: --checkpoint is needed (scripts/export_onnx.py defaults to the shipped weights)")
        args.checkpoint, shipped_channels = shipped_weights()
        args.output_channels = args.output_channels or shipped_channels
    model = load_model(args.checkpoint, args.output_channels or 512)
    widths = [TUTORIAL_WIDTH, 37, 260] if args.dynamic_width else [TUTORIAL_WIDTH]
    with tqdm(total=3, desc="export", unit="step") as bar:
        try:
            export(model, args.output, args.dynamic_width, args.opset)
            bar.update()
            onnx.checker.check_model(onnx.load(str(args.output)), full_check=True)
            bar.update()
            parity = compare(model, args.output, parity_batches(args.check_batches, widths), args.rtol, args.atol_scale)
            bar.update()
        except Exception as error:  # noqa: BLE001 - any failure of the exporter, checker or runtime is the answer
            print(f"export: FAILED at opset {args.opset}: {type(error).__name__}: {str(error)[:500]}", file=sys.stderr)
            return 1
    print(f"export: wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB), opset {args.opset}, "
          f"{INPUT_NAME} -> {OUTPUT_NAME}, dynamic batch{' and width' if args.dynamic_width else ''}; "
          "onnx.checker passed")
    print(f"export: ONNX Runtime vs PyTorch on text lines and noise at batch {', '.join(map(str, args.check_batches))} "
          f"and width {', '.join(map(str, widths))}: {parity}")
    for onnx_text, torch_text in parity.texts_differ[:5]:
        print(f"export: ONNX Runtime reads {onnx_text!r} where PyTorch reads {torch_text!r}", file=sys.stderr)
    if not parity.passed:
        print("export: FAILED: ONNX Runtime and PyTorch disagree beyond the tolerance", file=sys.stderr)
        return 1
    if args.dynamic_width:
        print("export: serve it with dims [1, 32, -1] for input.1 and [-1, 37] for 308 in "
              "model_repository_onnx/text_recognition_onnx's configs")
    return 0
