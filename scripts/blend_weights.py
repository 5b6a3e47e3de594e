"""Weights between two checkpoints of one recogniser: (1 - share) x the first + share x the second, parameter by
parameter (``str_ocr.checkpoint.blend_weights``); ``scripts/evaluate.py`` tells how the blend reads.

    .venv/bin/python scripts/blend_weights.py FIRST SECOND --share 0.5 --output blended.pth
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from str_ocr.checkpoint import CheckpointMismatchError, blend_weights, checkpoint_width, load_model, save_checkpoint


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--share", type=float, required=True, help="of the second, in [0, 1]")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if not 0 <= args.share <= 1:
        parser.error(f"--share is the second's part of the blend, in [0, 1]: got {args.share:g}")
    try:
        widths = [checkpoint_width(path) for path in (args.first, args.second)]
        if widths[0] != widths[1]:
            parser.error(f"{args.first} is {widths[0]} channels wide and {args.second} {widths[1]}: blend weights "
                         "of one width (scripts/widen_weights.py widens the narrower)")
        first, second = (load_model(path, widths[0]) for path in (args.first, args.second))
    except CheckpointMismatchError as error:
        parser.error(str(error))
    save_checkpoint(blend_weights(first, second, args.share), args.output)
    print(f"blend_weights: {1 - args.share:g} x {args.first} + {args.share:g} x {args.second} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
