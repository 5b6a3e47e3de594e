"""Export the recogniser to ONNX with the tutorial's tensor names, check it, and compare it with PyTorch.

    .venv/bin/python scripts/export_onnx.py                                   # the shipped weights
    .venv/bin/python scripts/export_onnx.py --checkpoint None-ResNet-None-CTC.pth --output-channels 512
    .venv/bin/python scripts/export_onnx.py --dynamic-width                   # any width, not only 100

``input.1`` [batch, 1, 32, 100] -> ``308`` [batch, 26, 37], batch dynamic; with ``--dynamic-width`` the width
too (``308`` is then [batch, W // 4 + 1, 37]), and the served config's dims become [1, 32, -1] and [-1, 37].
Exits non-zero when ONNX Runtime and PyTorch differ by more than ``--tolerance``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
from tqdm import tqdm

from str_ocr import INPUT_HEIGHT, INPUT_NAME, MIN_WIDTH, OUTPUT_NAME, load_model
from str_ocr.preprocess import TUTORIAL_WIDTH

OPSET = 18
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "model_repository" / "text_recognition_onnx" / "1" / "model.onnx"
MAX_WIDTH = 4096


def export(model: torch.nn.Module, output: Path, dynamic_width: bool) -> None:
    """Write ``model`` as ONNX (opset ``OPSET``) with a dynamic batch axis and, optionally, width axis."""
    example = torch.zeros(2, 1, INPUT_HEIGHT, TUTORIAL_WIDTH)
    axes = {0: torch.export.Dim("batch", min=1, max=1024)}
    if dynamic_width:
        axes[3] = torch.export.Dim("width", min=MIN_WIDTH, max=MAX_WIDTH)
    output.parent.mkdir(parents=True, exist_ok=True)
    # The exporter narrates each stage and warns about torchvision ops this model does not use.
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), str(output), input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                          dynamic_shapes=(axes,), opset_version=OPSET, dynamo=True, external_data=False)


def parity(model: torch.nn.Module, path: Path, batches: list[int], widths: list[int]) -> float:
    """The largest absolute difference between ONNX Runtime's and PyTorch's logits over the given shapes."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    worst = 0.0
    for batch in batches:
        for width in widths:
            lines = rng.uniform(-1, 1, (batch, 1, INPUT_HEIGHT, width)).astype(np.float32)
            (ours,) = session.run([OUTPUT_NAME], {INPUT_NAME: lines})
            with torch.inference_mode():
                reference = model(torch.from_numpy(lines)).numpy()
            if ours.shape != reference.shape:
                raise SystemExit(f"export: ONNX gives {list(ours.shape)} for {list(lines.shape)}, PyTorch {list(reference.shape)}")
            worst = max(worst, float(np.abs(ours - reference).max()))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, help="weights in either format load_model reads (default: the shipped ones)")
    parser.add_argument("--output-channels", type=int, help="recogniser width (default: the shipped model's, 64)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    parser.add_argument("--dynamic-width", action="store_true", help="make the width axis dynamic too")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest ONNX Runtime - PyTorch difference allowed")
    args = parser.parse_args(argv)
    if args.checkpoint is None:
        from str_ocr_server.repository import served_weights  # noqa: PLC0415

        args.checkpoint, shipped_channels = served_weights()
        args.output_channels = args.output_channels or shipped_channels
    model = load_model(args.checkpoint, args.output_channels or 512)
    widths = [TUTORIAL_WIDTH, 37, 260] if args.dynamic_width else [TUTORIAL_WIDTH]
    with tqdm(total=3, desc="export", unit="step") as bar:
        export(model, args.output, args.dynamic_width)
        bar.update()
        onnx.checker.check_model(onnx.load(str(args.output)), full_check=True)
        bar.update()
        worst = parity(model, args.output, [1, 5, 8], widths)
        bar.update()
    print(f"export: wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB), opset {OPSET}, "
          f"{INPUT_NAME} -> {OUTPUT_NAME}, dynamic batch{' and width' if args.dynamic_width else ''}; onnx.checker passed")
    print(f"export: ONNX Runtime vs PyTorch at batch 1, 5, 8 and width {', '.join(map(str, widths))}: "
          f"largest difference {worst:.2e} (tolerance {args.tolerance:.0e})")
    if worst > args.tolerance:
        print("export: FAILED: ONNX Runtime and PyTorch disagree beyond the tolerance", file=sys.stderr)
        return 1
    if args.dynamic_width:
        print("export: serve it with dims [1, 32, -1] for input.1 and [-1, 37] for 308 in text_recognition_onnx's configs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
