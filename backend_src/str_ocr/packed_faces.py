"""The declared faces copied into a folder of their own, each cut down to the glyphs the synthetic lines draw, for
a training machine that has none of the Debian packages (a GPU box, a container): there, ``STR_OCR_FONT_ROOT``
pointing at the folder draws the same lines (``str_ocr.fonts.FONT_ROOT``).

Cut down, a face keeps every glyph, hint and layout feature (kerning, ligatures, old-style figures) that letters,
digits and the space reach. Each one is then drawn both ways, with and without old-style figures, and where a pixel
differs (some hinted faces) or fontTools cannot read the file (a malformed table), the full file is copied instead.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fontTools import subset
from PIL import Image, ImageDraw, ImageFont

from .fonts import FONT_ROOT
from .text import ALPHABET

KEPT_CHARACTERS = ALPHABET + ALPHABET.upper() + " "
COMPARED_LINES = ("Hello World 0123456789", "office fluffy AVATAR Wave", "qxz 42 jig")


@dataclass(frozen=True)
class PackedFaces:
    faces: int
    copied_whole: int
    bytes: int


def _subset(source: Path, target: Path) -> None:
    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.legacy_kern = True  # the old 'kern' table, which fontTools drops unless told
    options.hinting = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=KEPT_CHARACTERS)
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def _drawn(path: Path, text: str, features: list[str] | None) -> np.ndarray:
    font = ImageFont.truetype(str(path), 40)
    left, top, right, bottom = font.getbbox(text, features=features)
    canvas = Image.new("L", (right - left + 4, bottom - top + 4), 255)
    ImageDraw.Draw(canvas).text((2 - left, 2 - top), text, font=font, fill=0, features=features)
    return np.asarray(canvas)


def draw_alike(first: Path, second: Path) -> bool:
    """Whether two font files draw ``COMPARED_LINES`` to the same pixels, with and without old-style figures."""
    return all(np.array_equal(_drawn(first, text, features), _drawn(second, text, features))
               for text in COMPARED_LINES for features in (None, ["onum"]))


def cut_down(source: Path, target: Path) -> bool:
    """``source`` cut down into ``target``, or copied whole where cutting it down would change the lines drawn in
    it; whether it was cut down."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _subset(source, target)
        if draw_alike(source, target):
            return True
    except Exception:  # noqa: BLE001 - whatever table fontTools refuses, the whole file draws the same lines
        pass
    shutil.copyfile(source, target)
    return False


def pack_faces(sources: Iterable[Path], folder: Path) -> PackedFaces:
    """``sources`` (files under ``FONT_ROOT``) cut down into ``folder``, each at its path relative to the root."""
    faces = whole = 0
    for source in sources:
        faces += 1
        whole += not cut_down(source, folder / source.relative_to(FONT_ROOT))
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return PackedFaces(faces, whole, size)
