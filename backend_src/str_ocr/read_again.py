"""Reading a line again where the first reading is unsure.

A variable-width line is read ``LINE_STRETCH`` times as wide as its aspect ratio. Where the greedy path's
probability (``Reading.confidence``) is below a threshold, the same line is resampled to other stretches and read
again, and the most confident of the readings is kept. Only the unsure lines cost more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image

from .contract import INPUT_HEIGHT, LINE_STRETCH, MAX_WIDTH, MIN_WIDTH
from .text import Reading

READ_AGAIN_STRETCHES = (1.0, 1.44)
"""The stretches an unsure line is read again at: its own aspect ratio, and 1.2 times as wide as served."""

LineReader = Callable[[list[np.ndarray]], list[Reading]]
"""``read(lines)``: the readings of grey ``[32, W]`` uint8 lines, in order."""


def restretched(line: np.ndarray, stretch: float, served: float = LINE_STRETCH) -> np.ndarray:
    """``line`` (grey ``[32, W]`` uint8, scaled ``served`` times as wide as its aspect ratio) resampled to be
    ``stretch`` times as wide, within the widths a served recogniser takes."""
    width = min(MAX_WIDTH, max(MIN_WIDTH, round(line.shape[1] * stretch / served)))
    return np.asarray(Image.fromarray(line).resize((width, INPUT_HEIGHT), Image.Resampling.BILINEAR))


def read_again_where_unsure(lines: Sequence[np.ndarray], read: LineReader, below: float,
                            stretches: Sequence[float] = READ_AGAIN_STRETCHES,
                            served: float = LINE_STRETCH) -> tuple[list[Reading], int]:
    """The readings of ``lines`` (each scaled ``served`` times as wide as its aspect ratio), each read once and,
    where its confidence is below ``below``, again at each of ``stretches``, keeping the most confident; and how
    many lines were read again."""
    first = read(list(lines))
    unsure = [i for i, reading in enumerate(first) if reading.confidence < below]
    if not unsure:
        return first, 0
    again = [read([restretched(lines[i], stretch, served) for i in unsure]) for stretch in stretches]
    readings = list(first)
    for k, i in enumerate(unsure):
        readings[i] = max([first[i], *(at_stretch[k] for at_stretch in again)], key=lambda r: r.confidence)
    return readings, len(unsure)
