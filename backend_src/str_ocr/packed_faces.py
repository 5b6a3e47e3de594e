"""The declared faces copied into a folder of their own, each cut down to the glyphs the synthetic lines draw, for
a training machine that has none of the Debian packages (a GPU box, a container): there, ``STR_OCR_FONT_ROOT``
pointing at the folder draws the same lines (``str_ocr.fonts.FONT_ROOT``).

Cut down, a face keeps every glyph, hint and layout feature (kerning, ligatures, old-style figures) that letters,
digits and the space reach. Each one is then drawn as the lines draw it, at their smallest, middle and largest size,
shaped and unshaped, with and without a stroke and old-style figures; where a pixel differs, or fontTools cannot read
the file (a malformed table), the full file is copied instead.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fontTools import subset
from PIL import Image, ImageDraw, ImageFont

from . import fonts
from .synth import figure_features
from .text import ALPHABET

KEPT_CHARACTERS = ALPHABET + ALPHABET[10:].upper() + " "
COMPARED_LINES = ("Hello World 0123456789", "office fluffy AVATAR Wave qxz jig")
COMPARED_SIZES = (28, 42, 56)
"""``synth.TextLineSynth`` draws faces 28 to 56 pixels high, where hinting can differ from one size to the next."""


@dataclass(frozen=True)
class PackedFaces:
    """What ``pack_faces`` wrote: how many faces, how many of them copied whole, and their size on disk."""

    faces: int
    copied_whole: int
    size_bytes: int


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


def _drawn(font: ImageFont.FreeTypeFont, text: str, stroke: int, old_style: bool) -> np.ndarray:
    asked = figure_features(font, old_style)
    left, top, right, bottom = font.getbbox(text, stroke_width=stroke, features=asked)
    canvas = Image.new("L", (right - left + 4, bottom - top + 4), 255)
    ImageDraw.Draw(canvas).text((2 - left, 2 - top), text, font=font, fill=0, stroke_width=stroke, stroke_fill=0,
                                features=asked)
    return np.asarray(canvas)


def drawing(path: Path) -> str:
    """A digest of ``COMPARED_LINES`` drawn in the face at ``path`` in every way ``synth`` draws lines: two files
    with the same digest draw the same lines."""
    digest = hashlib.sha256()
    for size, layout in itertools.product(COMPARED_SIZES, (None, ImageFont.Layout.BASIC)):  # None: Raqm if any
        font = ImageFont.truetype(str(path), size, layout_engine=layout)
        for text, stroke, old_style in itertools.product(COMPARED_LINES, (0, 1), (False, True)):
            pixels = _drawn(font, text, stroke, old_style)
            digest.update(f"{pixels.shape}".encode() + pixels.tobytes())
    return digest.hexdigest()


def draw_alike(first: Path, second: Path) -> bool:
    """Whether two font files draw ``COMPARED_LINES`` to the same pixels in every way ``synth`` draws lines."""
    return drawing(first) == drawing(second)


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
    """``sources`` (files under ``fonts.FONT_ROOT``) cut down into ``folder``, each at its path relative to the
    root."""
    if folder.resolve() == fonts.FONT_ROOT.resolve():
        raise ValueError(f"{folder} is where the faces are read from (STR_OCR_FONT_ROOT): "
                         "pack them into another folder")
    faces = whole = size = 0
    for source in sources:
        target = folder / source.relative_to(fonts.FONT_ROOT)
        whole += not cut_down(source, target)
        faces, size = faces + 1, size + target.stat().st_size
    return PackedFaces(faces, whole, size)
