"""A wider recogniser that reads as the given one does (``str_ocr.checkpoint.widen_weights``), to train on from there.

    .venv/bin/python scripts/widen_weights.py training_rounds/round22/str_64ch.pth --output-channels 128 \\
        --noise 0.01 --output str_128ch.pth
    .venv/bin/python scripts/train.py --init str_128ch.pth --output-channels 128 ...

Weights with context layers widen to a multiple of their width (64 -> 128, 192, ...); weights without, to any
multiple of 16.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr.checkpoint import CheckpointMismatchError, checkpoint_width, load_model, save_checkpoint, widen_weights


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="weights of any width (read from the file)")
    parser.add_argument("--output-channels", type=int, required=True, help="width of the new one (a multiple of 16)")
    parser.add_argument("--noise", type=float, default=0.01,
                        help="Gaussian noise on the new weights, as a share of each tensor's standard deviation, "
                             "so that copied channels can learn apart; 0 reads exactly as the checkpoint does "
                             "(default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="picks the noise, and which channels the new ones copy where the width is no multiple "
                             "of the old")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    try:
        width = checkpoint_width(args.checkpoint)
        wide = widen_weights(load_model(args.checkpoint, width), args.output_channels, args.noise, args.seed)
    except (CheckpointMismatchError, ValueError) as error:
        parser.error(str(error))
    save_checkpoint(wide, args.output)
    print(f"widen_weights: {args.checkpoint} ({width} channels) -> {args.output} "
          f"({args.output_channels} channels, noise {args.noise:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
