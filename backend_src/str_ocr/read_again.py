"""Reading a line again where the first reading is unsure.

A variable-width line is read ``LINE_STRETCH`` times as wide as its aspect ratio. Where the greedy path's
probability (``Reading.confidence``) is below a threshold, the same line is resampled to other stretches and read
again, and the most confident of the readings is kept. Only the unsure lines cost more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image

from .contract import LINE_STRETCH, MAX_WIDTH, UNSTRETCHED
from .preprocess import resize_line
from .text import Reading

READ_AGAIN_STRETCHES = (UNSTRETCHED, LINE_STRETCH * LINE_STRETCH)
"""The stretches an unsure line is read again at: its own aspect ratio, and ``LINE_STRETCH`` times the served
``LINE_STRETCH``."""

LineReader = Callable[[list[np.ndarray]], list[Reading]]
"""``read(lines)``: the readings of grey ``[32, W]`` uint8 lines, in order."""


def restretched(line: np.ndarray, stretch: float, served: float = LINE_STRETCH) -> np.ndarray:
    """``line`` (grey ``[32, W]`` uint8, scaled ``served`` times as wide as its aspect ratio) resampled to be
    ``stretch`` times as wide, within the widths a served recogniser takes. A line the served width limits clamped
    is taken as drawn at ``served``."""
    return np.asarray(resize_line(Image.fromarray(line), max_width=MAX_WIDTH, stretch=stretch / served))


def read_again_where_unsure(lines: Sequence[np.ndarray], read: LineReader, below: float,
                            stretches: Sequence[float] = READ_AGAIN_STRETCHES,
                            served: float = LINE_STRETCH) -> tuple[list[Reading], int]:
    """The readings of ``lines`` (each scaled ``served`` times as wide as its aspect ratio), each read once and,
    where its confidence is below ``below``, again at each of ``stretches`` but ``served``, keeping the most
    confident (the first on a tie); and how many lines were read again."""
    first = read(list(lines))
    unsure = [i for i, reading in enumerate(first) if reading.confidence < below]
    others = [stretch for stretch in stretches if stretch != served]
    if not unsure or not others:
        return first, 0
    again = [read([restretched(lines[i], stretch, served) for i in unsure]) for stretch in others]
    readings = list(first)
    for k, i in enumerate(unsure):
        readings[i] = max([first[i], *(at_stretch[k] for at_stretch in again)], key=lambda r: r.confidence)
    return readings, len(unsure)
