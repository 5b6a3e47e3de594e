"""A wider recogniser that reads as the given one does (``str_ocr.checkpoint.widen_weights``), to train on from there.

    .venv/bin/python scripts/widen_weights.py model_repository/text_recognition/1/str_64ch.pth --output-channels 96 \\
        --noise 0.01 --output str_96ch.pth
    .venv/bin/python scripts/train.py --init str_96ch.pth --output-channels 96 ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr.checkpoint import load_model, save_checkpoint, widen_weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--input-channels", type=int, default=64, help="width of the checkpoint's recogniser")
    parser.add_argument("--output-channels", type=int, required=True, help="width of the new one (a multiple of 16)")
    parser.add_argument("--noise", type=float, default=0.01,
                        help="Gaussian noise on the new weights, as a share of each tensor's standard deviation, "
                             "so that copied channels can learn apart (0: exactly the same readings)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    model = load_model(args.checkpoint, args.input_channels)
    save_checkpoint(widen_weights(model, args.output_channels, args.noise, args.seed), args.output)
    print(f"widen_weights: {args.checkpoint} ({args.input_channels} channels) -> {args.output} "
          f"({args.output_channels} channels, noise {args.noise:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
