"""Reading a line again where the first reading is unsure.

A variable-width line is read ``LINE_STRETCH`` times as wide as its aspect ratio. Where the greedy path's
probability (``Reading.confidence``) is below a threshold, the same line is resampled to other stretches and read
again; second weights, where given, read the unsure lines too, as served and at the other stretches. Only the
unsure lines cost more.

``rereadings`` says which lines each weights read again; the caller reads each ``Rereading`` in one call, the way it
reads (in process, or through a served recogniser); ``kept_readings`` keeps one reading a line, the one of
``KEEPS`` it is given keeps: the most confident, or the text the readings again agree on most.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from .contract import INPUT_HEIGHT, LINE, LOGITS, READ_AGAIN_KEEPS, output_length
from .errors import InputError
from .preprocess import LineLimits, denormalize, resize_line
from .text import Reading, read_logits

READ_AGAIN_STEP = 1.2
"""How much narrower and wider than it was served an unsure line is read again. Served at the default
``LINE_STRETCH`` of 1.2, that is its own aspect ratio and 1.44 times it, the widths round 36 measured."""

THRESHOLD_RANGE = "a confidence from 0 (never) to 1"
"""What ``read_again_below`` must be."""

LineReader = Callable[[list[np.ndarray]], list[Reading]]
"""``read(lines)``: the readings of grey ``[32, W]`` uint8 lines, in order."""
ServedLineReader = Callable[[list[np.ndarray]], Awaitable[list[Reading] | None]]
"""``await read(lines)``: the same, from a served recogniser; None where it could not read them."""


def read_again_stretches(served: float) -> tuple[float, float]:
    """The stretches a line served at stretch ``served`` is read again at: a ``READ_AGAIN_STEP`` either side."""
    return served / READ_AGAIN_STEP, served * READ_AGAIN_STEP


def read_again_threshold(below: float, name: str = "read_again_below") -> float:
    """``below``, the confidence under which a line is read again, after checking it: ``ValueError`` naming it
    ``name`` unless it is from 0 (read each line once) to 1."""
    if not 0 <= below <= 1:
        raise ValueError(f"{name} must be {THRESHOLD_RANGE}, got {below:g}")
    return below


def restretched(line: np.ndarray, stretch: float, limits: LineLimits = LineLimits()) -> np.ndarray:
    """``line`` (grey ``[32, W]`` uint8, scaled ``limits.stretch`` times as wide as its aspect ratio) resampled to be
    ``stretch`` times as wide, within ``limits``' widths. A line those widths clamped is taken as drawn at
    ``limits.stretch``."""
    return np.asarray(resize_line(Image.fromarray(line), min_width=limits.min_width, max_width=limits.max_width,
                                  stretch=stretch / limits.stretch))


@dataclass(frozen=True)
class Rereading:
    """Lines to read again: ``resampled``, each line ``of[k]`` resampled to another stretch (or, for second
    weights, as it was served), to be read in one call."""

    of: list[int]
    resampled: list[np.ndarray]


def unsure_lines(first: Sequence[Reading], below: float) -> list[int]:
    """The indices of the readings less sure than ``below``."""
    return [i for i, reading in enumerate(first) if reading.confidence < below]


def rereading(lines: Sequence[np.ndarray], first: Sequence[Reading], below: float,
              limits: LineLimits = LineLimits()) -> Rereading:
    """What to read again of ``lines`` (grey ``[32, W]`` uint8, read once as ``first``, served at
    ``limits.stretch``): each line less sure than ``below``, resampled to each of ``read_again_stretches`` that
    changes its width (not one that ``limits`` clamp to the width it has)."""
    unsure = unsure_lines(first, below)
    of, resampled = [], []
    for stretch in read_again_stretches(limits.stretch):
        for i in unsure:
            line = restretched(lines[i], stretch, limits)
            if line.shape != lines[i].shape:
                of.append(i)
                resampled.append(line)
    return Rereading(of, resampled)


def second_rereading(lines: Sequence[np.ndarray], first: Sequence[Reading], below: float,
                     plan: Rereading) -> Rereading:
    """What second weights read of ``lines`` (read once as ``first``): each line less sure than ``below`` as it was
    served, and as ``plan`` (the first weights' ``rereading``) resamples it."""
    unsure = unsure_lines(first, below)
    return Rereading(unsure + plan.of, [lines[i] for i in unsure] + plan.resampled)


def rereadings(lines: Sequence[np.ndarray], first: Sequence[Reading], below: float, limits: LineLimits,
               second: bool, first_weights_again: bool = True) -> list[Rereading]:
    """What the first weights read again of ``lines`` (``rereading``) and, with ``second``, what second weights
    read (``second_rereading``); with second weights and not ``first_weights_again``, the first weights read
    nothing again."""
    plan = rereading(lines, first, below, limits)
    if not second:
        return [plan]
    return [plan if first_weights_again else Rereading([], []), second_rereading(lines, first, below, plan)]


def readings_again(plans: Sequence[Rereading], again: Sequence[Sequence[Reading] | None]) -> dict[int, list[Reading]]:
    """Each line's readings in ``again``, the readings of each of ``plans`` (None where they could not be read), in
    the order of ``plans``."""
    by_line: dict[int, list[Reading]] = defaultdict(list)
    for plan, readings in zip(plans, again):
        if not plan.of or readings is None:
            continue
        if len(readings) != len(plan.resampled):
            raise ValueError(f"{len(plan.resampled)} lines were to be read again; {len(readings)} readings came back")
        for index, reading in zip(plan.of, readings):
            by_line[index].append(reading)
    return by_line


def most_confident(first: Reading, again: Sequence[Reading]) -> Reading:
    """The most confident of ``first`` and ``again`` (the earliest on a tie)."""
    return max([first, *again], key=lambda reading: reading.confidence)


def most_agreed(first: Reading, again: Sequence[Reading]) -> Reading:
    """The text the readings ``again`` agree on most, ``first`` (found unsure) left out: the text whose readings'
    confidences add up to the most (the one read first on a tie), with the largest of those confidences."""
    support: dict[str, float] = defaultdict(float)
    for reading in again:
        support[reading.text] += reading.confidence
    text = max(support, key=support.__getitem__)
    return max((reading for reading in again if reading.text == text), key=lambda reading: reading.confidence)


ReadingKept = Callable[[Reading, Sequence[Reading]], Reading]
"""``keep(first, again)``: which reading a line keeps, read once as ``first`` and again as ``again`` (not empty)."""
KEEPS: dict[str, ReadingKept] = {"most_agreed": most_agreed, "most_confident": most_confident}
"""The ways a line read again may keep a reading, by the name a model's ``read_again_keeps`` parameter gives."""
SERVED_KEEP = KEEPS[READ_AGAIN_KEEPS]
"""The way the served models keep a reading unless told otherwise."""


def kept_readings(first: Sequence[Reading], plans: Sequence[Rereading], again: Sequence[Sequence[Reading] | None],
                  keep: ReadingKept) -> tuple[list[Reading], int]:
    """``first`` with each line read again replaced by the reading ``keep`` keeps of its readings ``again``, the
    readings of each of ``plans`` (None where they could not be read: the readings before them stand); and how
    many lines were read again."""
    readings = list(first)
    by_line = readings_again(plans, again)
    for index, found in by_line.items():
        readings[index] = keep(first[index], found)
    return readings, len(by_line)


def read_again_where_unsure(lines: Sequence[np.ndarray], read: LineReader, below: float,
                            limits: LineLimits = LineLimits(),
                            second: LineReader | None = None,
                            keep: ReadingKept = SERVED_KEEP,
                            first_weights_again: bool = True) -> tuple[list[Reading], int]:
    """The readings of ``lines``, each read once and the unsure read again (``rereading``); with ``second``
    (other weights), the unsure read by those as well, as served and at the other stretches (by those alone, not
    ``first_weights_again``); each unsure line's reading the one ``keep`` keeps; and how many lines were read
    again."""
    first = read(list(lines))
    plans = rereadings(lines, first, below, limits, second is not None, first_weights_again)
    readers = [read, second]
    return kept_readings(first, plans, [reader(plan.resampled) if plan.of else None
                                        for plan, reader in zip(plans, readers)], keep)


async def read_again_served(lines: Sequence[np.ndarray], first: Sequence[Reading], below: float, limits: LineLimits,
                            read: ServedLineReader, second: ServedLineReader | None,
                            keep: ReadingKept) -> tuple[list[Reading], int]:
    """``read_again_where_unsure`` through served recognisers, ``lines`` already read as ``first``: the first
    weights' and the second's readings asked for at once. Where a reader raises, it is raised once both are done, so
    that no request is left running."""
    plans = rereadings(lines, first, below, limits, second is not None)

    async def read_plan(plan: Rereading, reader: ServedLineReader) -> list[Reading] | None:
        return await reader(plan.resampled) if plan.of else None

    again = await asyncio.gather(*(read_plan(plan, reader) for plan, reader in zip(plans, [read, second])),
                                 return_exceptions=True)
    if failed := next((answer for answer in again if isinstance(answer, BaseException)), None):
        raise failed
    return kept_readings(first, plans, again, keep)


async def read_logits_again(logits: np.ndarray, lines: np.ndarray | None, max_steps: int, below: float,
                            limits: LineLimits, read: ServedLineReader, second: ServedLineReader | None,
                            keep: ReadingKept) -> tuple[list[Reading], int]:
    """``ocr_postprocess``'s reading: the readings of ``logits`` ``[N, T, 37]`` (``text.read_logits``, at most
    ``max_steps`` time steps) and, where the recogniser inputs they came from are given (``lines``,
    ``[N, 1, 32, W]``, scaled into ``limits``), those less sure than ``below`` read again with ``read`` and
    ``second`` (``read_again_served``; the readings before kept where a reader cannot); and how many lines were."""
    first = read_logits(logits, max_steps)
    if lines is None:
        return first, 0
    grey = grey_lines(lines, logits.shape[1], len(first), limits)
    return await read_again_served(grey, first, below, limits, read, second, keep)


def grey_lines(lines: np.ndarray, steps: int, count: int, limits: LineLimits) -> list[np.ndarray]:
    """The grey ``[32, W]`` uint8 lines of a client's recogniser inputs ``[count, 1, 32, W]``, after checking them
    as any request: ``InputError`` for a shape other than that, a width outside ``limits`` or one whose logits
    have other than ``steps`` time steps, or a non-finite value."""
    if lines.ndim != 4 or lines.shape[:3] != (count, 1, INPUT_HEIGHT):
        raise InputError(f"{LINE} must be [{count}, 1, {INPUT_HEIGHT}, W], the lines of the {count} {LOGITS}; "
                         f"got {list(lines.shape)}")
    width = lines.shape[3]
    if not limits.min_width <= width <= limits.max_width:
        raise InputError(f"{LINE} is {width} wide; lines are {limits.min_width} to {limits.max_width} wide")
    if output_length(width) != steps:
        raise InputError(f"{LINE} is {width} wide, which the recogniser reads in {output_length(width)} time steps; "
                         f"{LOGITS} has {steps}")
    if not np.isfinite(lines).all():
        raise InputError(f"{LINE} contains NaN or infinite values")
    return [denormalize(line[0]) for line in lines]
