"""Weights between two checkpoints of one recogniser: (1 - share) x the first + share x the second, parameter by
parameter (``str_ocr.checkpoint.blend_weights``); ``scripts/evaluate.py`` tells how the blend reads.

    .venv/bin/python scripts/blend_weights.py FIRST SECOND --share 0.5 --output blended.pth [--output-channels 64]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr.checkpoint import blend_weights, load_model, save_checkpoint


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--share", type=float, required=True, help="of the second, in [0, 1]")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--output-channels", type=int, default=64, help="width of both recognisers")
    args = parser.parse_args()
    first, second = (load_model(path, args.output_channels) for path in (args.first, args.second))
    save_checkpoint(blend_weights(first, second, args.share), args.output)
    print(f"blend_weights: {1 - args.share:g} x {args.first} + {args.share:g} x {args.second} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
