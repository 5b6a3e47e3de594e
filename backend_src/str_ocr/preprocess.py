"""From a picture of a text line to the recogniser's input: the one place for resizing and normalisation.

Training, evaluation, the clients and the served ``ocr_preprocess`` model all go through
``line_input``, so that a line is seen the same way wherever it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from .contract import (  # noqa: F401 - TUTORIAL_WIDTH re-exported
    INPUT_HEIGHT, LINE_STRETCH, MAX_WIDTH, MIN_WIDTH, STRETCH_RANGE, TUTORIAL_WIDTH)

PIXEL_MAX = 255.0


@dataclass(frozen=True)
class LineLimits:
    """The widths a served recogniser accepts (the height is always ``INPUT_HEIGHT``), and how much wider than its
    aspect ratio a line is scaled into them."""

    min_width: int = MIN_WIDTH
    max_width: int = MAX_WIDTH
    stretch: float = LINE_STRETCH

    def __post_init__(self) -> None:
        if self.min_width < MIN_WIDTH:
            raise ValueError(f"min_width must be at least {MIN_WIDTH}, the narrowest line the network takes")
        if self.max_width < self.min_width:
            raise ValueError(f"max_width ({self.max_width}) is below min_width ({self.min_width})")
        if not STRETCH_RANGE[0] <= self.stretch <= STRETCH_RANGE[1]:
            raise ValueError(f"line_stretch must be a width factor from {STRETCH_RANGE[0]:g} to {STRETCH_RANGE[1]:g}, "
                             f"got {self.stretch:g}")


def normalize(pixels: np.ndarray) -> np.ndarray:
    """Grey levels in [0, 255] (any numeric dtype) -> float32 in [-1, 1], as the recogniser was trained."""
    return (np.asarray(pixels, dtype=np.float32) / (PIXEL_MAX / 2) - 1.0).astype(np.float32, copy=False)


def denormalize(values: np.ndarray) -> np.ndarray:
    """Model inputs in [-1, 1] -> uint8 grey levels (for looking at what the model saw)."""
    grey = (np.asarray(values, dtype=np.float32) + 1.0) * (PIXEL_MAX / 2)
    return np.clip(np.rint(grey), 0, PIXEL_MAX).astype(np.uint8)


def scaled_width(width: int, height: int, min_width: int = MIN_WIDTH, max_width: int | None = None,
                 stretch: float = LINE_STRETCH) -> int:
    """The width of a ``width`` x ``height`` line scaled to ``INPUT_HEIGHT`` rows, ``stretch`` times as wide as its
    aspect ratio makes it."""
    scaled = max(min_width, round(width * stretch * INPUT_HEIGHT / max(height, 1)))
    return scaled if max_width is None else min(scaled, max_width)


def resize_line(
    image: Image.Image, width: int | None = None, min_width: int = MIN_WIDTH, max_width: int | None = None,
    stretch: float = LINE_STRETCH,
) -> Image.Image:
    """A grey line ``INPUT_HEIGHT`` pixels high: ``width`` wide if given, else as ``scaled_width`` says."""
    if width is None:
        width = scaled_width(image.width, image.height, min_width, max_width, stretch)
    if image.size == (width, INPUT_HEIGHT):
        return image
    return image.resize((width, INPUT_HEIGHT), Image.Resampling.BILINEAR, reducing_gap=2.0)


def line_input(
    image: Image.Image, width: int | None = None, min_width: int = MIN_WIDTH, max_width: int | None = None,
    stretch: float = LINE_STRETCH,
) -> np.ndarray:
    """The recogniser's input ``[1, 32, W]`` float32 for a grey (mode ``L``) line image."""
    resized = resize_line(image, width, min_width, max_width, stretch)
    return normalize(np.asarray(resized, dtype=np.uint8))[np.newaxis]
