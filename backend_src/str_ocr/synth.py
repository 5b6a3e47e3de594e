"""Synthetic text lines for training and evaluation, rendered with Pillow in a declared font set.

Each line is a string over the alphabet (random characters, word-like syllables, or numbers and
codes) drawn in a random face of the set (``str_ocr.fonts``: ``training`` unless told), size, case
and polarity, then distorted the way photographed and scanned text is: margins, slight rotation and
shear, blur, noise, low contrast, JPEG artefacts. The result goes through ``preprocess.resize_line``,
as served images do. ``Variety`` adds more: light-on-dark lines, faces stretched or squeezed, drawn
heavier, or laid out without shaping.

    synth = TextLineSynth(seed=1)
    sample = synth.sample()                      # variable width: height 32, aspect ratio kept
    sample = synth.sample(width=TUTORIAL_WIDTH)  # the tutorial's fixed 32x100
    unseen = TextLineSynth(seed=1, fonts="held-out", variety=Variety(light_on_dark=1.0))
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from .fonts import font_files
from .preprocess import TUTORIAL_WIDTH, resize_line
from .text import ALPHABET

MAX_CHARS = 25
FIXED_MAX_CHARS = 12
"""Longest string drawn into the tutorial's fixed 32x100 input: past about 12 characters each one
is squeezed under 8 pixels wide (2 time steps), which a reader of 32-pixel-high text cannot resolve."""

VOWELS, CONSONANTS = "aeiou", "bcdfghjklmnprstvwyz"
ONSETS = [*CONSONANTS, "br", "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr", "wh"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "ng", "ck", "st", "nd", "rt"]


@dataclass(frozen=True)
class Variety:
    """How often each variation is drawn, each a share of lines from 0 to 1. The defaults draw the
    lines the first weights were trained and measured on; other values draw other lines."""

    light_on_dark: float = 0.25
    stretch: float = 0.0
    """Lines stretched or squeezed horizontally (0.7x to 1.4x), as wider and narrower faces are."""
    heavy: float = 0.0
    """Lines drawn with a 1-pixel stroke around the glyphs, heavier than the face's own weight."""
    basic_layout: float = 0.0
    """Lines laid out glyph by glyph, without shaping: no ligatures such as "fl" and "fi", no kerning."""


@lru_cache(maxsize=1024)
def _font(path: Path, size: int, basic_layout: bool = False) -> ImageFont.FreeTypeFont:
    engine = ImageFont.Layout.BASIC if basic_layout else None  # None: Raqm where Pillow has it
    return ImageFont.truetype(str(path), size, layout_engine=engine)


@dataclass(frozen=True)
class Sample:
    """A rendered line: grey levels ``[32, W]`` (uint8) and the text it shows (lower case)."""

    image: np.ndarray
    text: str


class TextLineSynth:
    """A seeded, endless source of text-line images; the same seed, fonts and variety give the same lines.
    ``fonts`` is a declared set's name (``str_ocr.fonts.FONT_SETS``) or a list of font files."""

    def __init__(self, seed: int, fonts: str | Sequence[Path] = "training", max_width: int = 2048,
                 variety: Variety = Variety()) -> None:
        self.rng = random.Random(seed)
        self.noise = np.random.default_rng(seed)
        self.fonts = font_files(fonts) if isinstance(fonts, str) else list(fonts)
        self.max_width = max_width
        self.variety = variety

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
        light_on_dark = self.rng.random() >= 1 - self.variety.light_on_dark
        return (ink, background) if light_on_dark else (background, ink)

    def _chance(self, share: float) -> bool:
        """Whether to apply a variation of this ``share``; draws nothing when it is 0, so that
        the default variety draws the same lines as before it existed."""
        return share > 0 and self.rng.random() < share

    def _draw(self, shown: str) -> Image.Image:
        rng = self.rng
        size = rng.randint(28, 56)
        path = rng.choice(self.fonts)
        font = _font(path, size, self._chance(self.variety.basic_layout))
        background, ink = self._colours()
        stroke = 1 if self._chance(self.variety.heavy) else 0
        left, top, right, bottom = font.getbbox(shown, stroke_width=stroke)
        margin_x = [int(rng.uniform(0.0, 0.5) * size) for _ in range(2)]
        margin_y = [int(rng.uniform(0.0, 0.3) * size) for _ in range(2)]
        canvas = Image.new("L", (right - left + sum(margin_x), bottom - top + sum(margin_y)), background)
        ImageDraw.Draw(canvas).text((margin_x[0] - left, margin_y[0] - top), shown, font=font, fill=ink,
                                    stroke_width=stroke, stroke_fill=ink)
        if self._chance(self.variety.stretch):
            factor = rng.uniform(0.7, 1.4)
            canvas = canvas.resize((max(1, round(canvas.width * factor)), canvas.height), Image.Resampling.BILINEAR)
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

