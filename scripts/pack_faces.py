"""Copy the declared faces into a folder, each cut down to the glyphs the synthetic lines draw, for a training
machine without the Debian packages (``str_ocr.packed_faces``); there, ``STR_OCR_FONT_ROOT=DIR`` draws the same lines.

    .venv/bin/python scripts/pack_faces.py DIR [--sets extended held-out]
    STR_OCR_FONT_ROOT=DIR python scripts/train.py --fonts extended ...     # on the training machine
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from tqdm import tqdm

from str_ocr.fonts import FONT_SETS, font_files
from str_ocr.packed_faces import pack_faces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--sets", nargs="+", default=["extended", "held-out"], choices=list(FONT_SETS),
                        help="the font sets to copy (default: what training and its held-out figure draw in)")
    args = parser.parse_args(argv)
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # its notes on tables it drops or repairs, face by face
    sources = sorted({path for name in args.sets for path in font_files(name)})
    try:
        packed = pack_faces(tqdm(sources, desc="faces", unit="face"), args.folder)
    except ValueError as error:
        parser.error(str(error))
    print(f"{packed.faces} faces in {args.folder} ({packed.copied_whole} copied whole): "
          f"{packed.size_bytes / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
