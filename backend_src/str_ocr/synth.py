"""Synthetic text lines for training and evaluation, rendered with Pillow from the machine's fonts.

Each line is a string over the alphabet (random characters, word-like syllables, or numbers and
codes) drawn in a random font, size, case and polarity, then distorted the way photographed and
scanned text is: margins, slight rotation and shear, blur, noise, low contrast, JPEG artefacts.
The result goes through ``preprocess.resize_line``, as served images do.

    synth = TextLineSynth(seed=1)
    sample = synth.sample()                      # variable width: height 32, aspect ratio kept
    sample = synth.sample(width=TUTORIAL_WIDTH)  # the tutorial's fixed 32x100
"""

from __future__ import annotations

import io
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from .preprocess import TUTORIAL_WIDTH, resize_line
from .text import ALPHABET

FONT_DIRS_ENV = "STR_OCR_FONT_DIRS"
DEFAULT_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts")
MAX_CHARS = 25
FIXED_MAX_CHARS = 12
"""Longest string drawn into the tutorial's fixed 32x100 input: past about 12 characters each one
is squeezed under 8 pixels wide (2 time steps), which a reader of 32-pixel-high text cannot resolve."""

VOWELS, CONSONANTS = "aeiou", "bcdfghjklmnprstvwyz"
ONSETS = [*CONSONANTS, "br", "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr", "wh"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "ng", "ck", "st", "nd", "rt"]


def find_fonts(dirs: Sequence[str | os.PathLike[str]] | None = None) -> list[Path]:
    """TrueType/OpenType fonts under ``dirs`` (default: ``$STR_OCR_FONT_DIRS``, else the system's),
    in a machine-independent order so that a seed draws the same fonts wherever they are installed."""
    if dirs is None:
        dirs = os.environ.get(FONT_DIRS_ENV, os.pathsep.join(DEFAULT_FONT_DIRS)).split(os.pathsep)
    found = {p.name: p for d in dirs for p in Path(d).expanduser().rglob("*") if p.suffix.lower() in {".ttf", ".otf"}}
    if not found:
        raise FileNotFoundError(
            f"no .ttf/.otf fonts under {list(map(str, dirs))}: run `make setup` (installs DejaVu, Liberation "
            f"and FreeFont) or point ${FONT_DIRS_ENV} at a folder of fonts"
        )
    return [found[name] for name in sorted(found)]


@lru_cache(maxsize=512)
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


@dataclass(frozen=True)
class Sample:
    """A rendered line: grey levels ``[32, W]`` (uint8) and the text it shows (lower case)."""

    image: np.ndarray
    text: str


class TextLineSynth:
    """A seeded, endless source of text-line images; the same seed and fonts give the same lines."""

    def __init__(self, seed: int, fonts: Sequence[Path] | None = None, max_width: int = 2048) -> None:
        self.rng = random.Random(seed)
        self.noise = np.random.default_rng(seed)
        self.fonts = list(fonts) if fonts is not None else find_fonts()
        self.max_width = max_width

    # --- what the line says ---

    def random_text(self, max_chars: int = MAX_CHARS) -> str:
        """1 to ``max_chars`` characters: random ones, word-like syllables, or numbers and codes."""
        rng = self.rng
        length = rng.randint(1, max_chars)
        kind = rng.random()
        if kind < 0.35:
            return "".join(rng.choice(ALPHABET) for _ in range(length))
        if kind < 0.8:
            word = ""
            while len(word) < length:
                word += rng.choice(ONSETS) + rng.choice(VOWELS) * rng.choice([1, 1, 1, 2]) + rng.choice(CODAS)
            return word[:length]
        digits = "".join(rng.choice("0123456789") for _ in range(length))
        if length > 3 and rng.random() < 0.5:  # a code such as "ab1234" or "2024x"
            cut = rng.randint(1, length - 1)
            letters = "".join(rng.choice(ALPHABET[10:]) for _ in range(cut))
            return letters + digits[cut:] if rng.random() < 0.5 else digits[cut:] + letters
        return digits

    # --- how it looks ---

    def _colours(self) -> tuple[int, int]:
        """Background and ink grey levels, at least 60 levels apart, either polarity."""
        contrast = self.rng.randint(60, 230)
        background = self.rng.randint(contrast, 255)
        ink = background - contrast
        return (background, ink) if self.rng.random() < 0.75 else (ink, background)

    def _draw(self, shown: str) -> Image.Image:
        rng = self.rng
        size = rng.randint(28, 56)
        font = _font(rng.choice(self.fonts), size)
        background, ink = self._colours()
        left, top, right, bottom = font.getbbox(shown)
        margin_x = [int(rng.uniform(0.0, 0.5) * size) for _ in range(2)]
        margin_y = [int(rng.uniform(0.0, 0.3) * size) for _ in range(2)]
        canvas = Image.new("L", (right - left + sum(margin_x), bottom - top + sum(margin_y)), background)
        ImageDraw.Draw(canvas).text((margin_x[0] - left, margin_y[0] - top), shown, font=font, fill=ink)
        return self._distort(canvas, background)

    def _distort(self, image: Image.Image, background: int) -> Image.Image:
        rng = self.rng
        if rng.random() < 0.5:
            shear = rng.uniform(-0.3, 0.3)
            width = image.width + int(abs(shear) * image.height)
            offset = -shear * image.height if shear > 0 else 0
            image = image.transform((width, image.height), Image.Transform.AFFINE, (1, shear, offset, 0, 1, 0),
                                    Image.Resampling.BILINEAR, fillcolor=background)
        if rng.random() < 0.5:
            image = image.rotate(rng.uniform(-3, 3), Image.Resampling.BILINEAR, expand=True, fillcolor=background)
        if rng.random() < 0.5:
            image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.5)))
        return image

    def _degrade(self, image: Image.Image) -> np.ndarray:
        """Noise, contrast and JPEG artefacts, applied at the recogniser's resolution."""
        rng = self.rng
        pixels = np.asarray(image, dtype=np.float32)
        if rng.random() < 0.3:
            mean = pixels.mean()
            pixels = mean + (pixels - mean) * rng.uniform(0.5, 1.0)
        if rng.random() < 0.5:
            pixels = pixels + self.noise.normal(0, rng.uniform(2, 12), pixels.shape)
        pixels = np.clip(pixels, 0, 255).astype(np.uint8)
        if rng.random() < 0.2:
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "JPEG", quality=rng.randint(30, 90))
            pixels = np.asarray(Image.open(buffer).convert("L"))
        return pixels

    def render(self, text: str, width: int | None = None) -> np.ndarray:
        """``text`` as a ``[32, W]`` uint8 line: ``width`` wide if given, else its natural aspect ratio."""
        shown = {0: text, 1: text.upper(), 2: text.capitalize()}[self.rng.choices([0, 1, 2], [5, 3, 2])[0]]
        line = resize_line(self._draw(shown), width, max_width=self.max_width)
        return self._degrade(line)

    def sample(self, width: int | None = None, max_chars: int | None = None) -> Sample:
        """A random line; at the tutorial's 32x100, strings of at most ``FIXED_MAX_CHARS``."""
        if max_chars is None:
            max_chars = FIXED_MAX_CHARS if width == TUTORIAL_WIDTH else MAX_CHARS
        text = self.random_text(max_chars)
        return Sample(self.render(text, width), text)


def ctc_feasible(text: str, time_steps: int) -> bool:
    """Whether CTC can emit ``text`` in ``time_steps`` steps (one per character, plus a blank between repeats)."""
    repeats = sum(a == b for a, b in zip(text, text[1:]))
    return len(text) + repeats <= time_steps

