"""Write a seeded, untrained recogniser as a checkpoint (a stand-in until trained weights exist).

    .venv/bin/python scripts/init_checkpoint.py --output-channels 64 --seed 0 --output PATH
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from str_ocr import STRModel, save_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-channels", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=Path("model_repository/text_recognition/1/str_64ch.pth"))
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    save_checkpoint(STRModel(output_channels=args.output_channels), args.output)
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
