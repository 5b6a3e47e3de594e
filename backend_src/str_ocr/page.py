"""Reading a whole image: decode it, find its text, cut every word out upright, and put the readings in order.

The steps between the detector and the recogniser, with no model in them, so that the served ``ocr_page`` and
an in-process reader share them:

    page = decode_page(data, limits)                     # RGB [h, w, 3], limits checked before decoding
    pixels, scale = detector_input(page.rgb)             # str_ocr.detection
    boxes, dropped = strongest(find_boxes(probability, scale, page.size), max_boxes)
    words = cut_words(page.grey, boxes, word_gap)        # upright, height 32, one per word, in reading order
    ... each ``word.line`` [1, 32, W] to the recogniser, the unsure again at other stretches (str_ocr.read_again) ...

The detector finds lines of text where words stand close; the recogniser's alphabet has no space, so a line is
cut into words at the gaps in its ink at least ``word_gap`` times its height.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image

from .contract import CROP_BATCHINGS, PAGE_PARAMETERS, SECOND_RECOGNIZER_PARAMETER, output_length
from .detection import Boxes, DetectorSettings, detector_input, find_boxes, reading_order
from .errors import Cancelled
from .images import ImageLimits, open_image, to_rgb
from .preprocess import LineLimits, denormalize, normalize, resize_line
from .read_again import KEEPS, read_again_served, read_again_threshold
from .text import Reading, greedy_decode

LETTER_GAP_RATIO = 2.0
"""A gap between words is also at least this many times the median gap between the line's letters: wide faces
and monospaced ones space their letters far apart."""
WORD_MARGIN = 0.15
"""Blank kept on each side of a word cut from a line, as a share of the line's height."""


@dataclass(frozen=True)
class Page:
    """A decoded image: ``rgb`` ``[h, w, 3]`` and ``grey`` ``[h, w]``, uint8."""

    rgb: np.ndarray
    grey: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        """``(height, width)``."""
        return self.grey.shape[:2]


@dataclass(frozen=True)
class Word:
    """One word to read: its corners ``[4, 2]`` in the image and the recogniser's input ``[1, 32, W]``."""

    corners: np.ndarray
    line: np.ndarray


def decode_page(data: bytes, limits: ImageLimits) -> Page:
    """The image of a PNG or JPEG file, or ``InputError``: the same checks as a line's (``images.open_image``)."""
    rgb = np.asarray(to_rgb(open_image(data, limits)))
    return Page(rgb, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))


def strongest(boxes: Boxes, max_boxes: int) -> tuple[Boxes, int]:
    """At most ``max_boxes`` boxes, those the detector is surest of, and how many were dropped."""
    if len(boxes) <= max_boxes:
        return boxes, 0
    keep = np.sort(np.argsort(-boxes.scores, kind="stable")[:max_boxes])
    return boxes.take(keep), len(boxes) - max_boxes


def upright(grey: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The quadrilateral ``corners`` (clockwise from top-left) of ``grey``, warped to an upright rectangle."""
    width = int(round(max(np.linalg.norm(corners[1] - corners[0]), np.linalg.norm(corners[2] - corners[3]))))
    height = int(round(max(np.linalg.norm(corners[3] - corners[0]), np.linalg.norm(corners[2] - corners[1]))))
    width, height = max(width, 1), max(height, 1)
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    warp = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
    return cv2.warpPerspective(grey, warp, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def ink_of(line: np.ndarray) -> np.ndarray:
    """Where a grey line ``[32, W]`` has ink (1) or ground (0): Otsu's threshold, the ground being what the border
    mostly is, so that dark on light and light on dark both work."""
    _, dark = cv2.threshold(line, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    border = np.concatenate([dark[0], dark[-1], dark[:, 0], dark[:, -1]])
    return dark if border.mean() < 0.5 else 1 - dark


def word_spans(ink: np.ndarray, word_gap: float) -> list[tuple[int, int]]:
    """The column ranges ``[start, stop)`` of the words in a line's ink ``[32, W]``: split at runs of inkless
    columns at least ``word_gap`` times the line's height and ``LETTER_GAP_RATIO`` times the median gap between its
    letters. The whole line where it has no ink."""
    height, width = ink.shape
    columns = np.flatnonzero(ink.any(axis=0))
    if len(columns) == 0:
        return [(0, width)]
    gaps = np.diff(columns) - 1
    letter_gap = float(np.median(gaps[gaps > 0])) if (gaps > 0).any() else 0.0
    breaks = np.flatnonzero(gaps >= max(word_gap * height, LETTER_GAP_RATIO * letter_gap))
    starts = np.concatenate([[columns[0]], columns[breaks + 1]])
    stops = np.concatenate([columns[breaks], [columns[-1]]]) + 1
    return list(zip(starts.tolist(), stops.tolist()))


def _within(corners: np.ndarray, left: float, right: float, top: float, bottom: float) -> np.ndarray:
    """The part of a box between fractions ``left`` and ``right`` of its length and ``top`` and ``bottom`` of its
    height."""
    top_left, top_right, _, bottom_left = corners
    along, down = top_right - top_left, bottom_left - top_left
    return np.stack([top_left + left * along + top * down, top_left + right * along + top * down,
                     top_left + right * along + bottom * down, top_left + left * along + bottom * down])


def cut_words(grey: np.ndarray, boxes: Boxes, word_gap: float, limits: LineLimits = LineLimits()) -> list[Word]:
    """The words of ``boxes``, in reading order, each upright and scaled to the recogniser's height, with the
    corners of its ink (the detector's boxes are grown well past it)."""
    words = []
    for corners in boxes.corners[reading_order(boxes.corners)]:
        drawn = upright(grey, corners)
        line = np.asarray(resize_line(Image.fromarray(drawn), max_width=limits.max_width, stretch=limits.stretch))
        ink = ink_of(line)
        height, width = line.shape
        margin = int(round(WORD_MARGIN * height))
        # Lines are scaled wider than their aspect ratio (limits.stretch, less where max_width caps them): a gap, a
        # share of the height, widens alike.
        stretch = (width / height) / (drawn.shape[1] / drawn.shape[0])
        for start, stop in word_spans(ink, word_gap * stretch):
            rows = np.flatnonzero(ink[:, start:stop].any(axis=1))
            top, bottom = (rows[0], rows[-1] + 1) if len(rows) else (0, height)
            piece = line[:, max(0, start - margin):min(width, stop + margin)]
            if piece.shape[1] < limits.min_width:
                piece = cv2.copyMakeBorder(piece, 0, 0, 0, limits.min_width - piece.shape[1], cv2.BORDER_REPLICATE)
            words.append(Word(_within(corners, start / width, stop / width, top / height, bottom / height)
                              .astype(np.float32), normalize(piece)[np.newaxis]))
    return words


@dataclass(frozen=True)
class PageSettings:
    """What ``ocr_page`` is configured with (``str_ocr.settings.page_settings`` reads them from its config)."""

    images: ImageLimits = ImageLimits(max_pixels=PAGE_PARAMETERS["max_pixels"])
    detector: DetectorSettings = DetectorSettings()
    lines: LineLimits = LineLimits()
    max_boxes: int = PAGE_PARAMETERS["max_boxes"]
    max_words: int = PAGE_PARAMETERS["max_words"]
    word_gap: float = PAGE_PARAMETERS["word_gap"]
    crop_batching: str = PAGE_PARAMETERS["crop_batching"]
    max_crops_per_request: int = PAGE_PARAMETERS["max_crops_per_request"]
    group_padding: float = PAGE_PARAMETERS["group_padding"]
    max_requests_in_flight: int = PAGE_PARAMETERS["max_requests_in_flight"]
    read_again_below: float = PAGE_PARAMETERS["read_again_below"]
    read_again_keeps: str = PAGE_PARAMETERS["read_again_keeps"]
    second_recognizer: str = PAGE_PARAMETERS[SECOND_RECOGNIZER_PARAMETER]

    def __post_init__(self) -> None:
        if self.crop_batching not in CROP_BATCHINGS:
            raise ValueError(f"crop_batching must be one of {', '.join(CROP_BATCHINGS)}; got {self.crop_batching!r}")
        counts = {"max_boxes": self.max_boxes, "max_words": self.max_words,
                  "max_crops_per_request": self.max_crops_per_request,
                  "max_requests_in_flight": self.max_requests_in_flight}
        if bad := [name for name, value in counts.items() if value < 1]:
            raise ValueError(f"{', '.join(bad)} must be at least 1")
        if not 0 < self.word_gap < 10 or self.group_padding < 0:
            raise ValueError("word_gap must be a positive share of a line's height, group_padding 0 or more")
        read_again_threshold(self.read_again_below)
        if self.read_again_keeps not in KEEPS:
            raise ValueError(f"read_again_keeps must be one of {', '.join(KEEPS)}; got {self.read_again_keeps!r}")


@dataclass(frozen=True)
class PageReading:
    """Every word read on a page, in reading order: corners ``[N, 4, 2]``, texts and confidences; how many of the
    detector's boxes and of the words cut from them were dropped past ``max_boxes`` and ``max_words``; and how many
    words were read again."""

    corners: np.ndarray
    readings: list[Reading] = field(default_factory=list)
    dropped: int = 0
    read_again: int = 0


DETECTOR_STEP, RECOGNIZER_STEP, SECOND_RECOGNIZER_STEP = "detector", "recognizer", "second recognizer"
"""The models ``Infer`` reaches: the detector, the recogniser, and the second weights' (``second_recognizer``)."""
Infer = Callable[[str, np.ndarray], Awaitable[np.ndarray]]
"""``infer(step, input)``: the output for one input of the model of ``step``, one of the steps above."""


async def read_page(data: bytes, settings: PageSettings, infer: Infer,
                    cancelled: Callable[[], bool] = lambda: False) -> PageReading:
    """The words of an encoded image, read with the detector and the recogniser that ``infer`` reaches."""
    page = decode_page(data, settings.images)
    pixels, scale = detector_input(page.rgb, settings.detector)
    probability = await infer(DETECTOR_STEP, pixels)
    boxes, dropped = strongest(find_boxes(probability[0, 0], scale, page.size, settings.detector), settings.max_boxes)
    words = cut_words(page.grey, boxes, settings.word_gap, settings.lines)
    if len(words) > settings.max_words:  # lines cut into many words: the budget holds for words too
        dropped += len(words) - settings.max_words
        words = words[:settings.max_words]
    if cancelled():
        raise Cancelled("the client cancelled the request")
    readings, read_again = await read_words([word.line for word in words], settings, infer, cancelled)
    read = [i for i, reading in enumerate(readings) if reading.text]
    corners = np.stack([words[i].corners for i in read]) if read else np.zeros((0, 4, 2), np.float32)
    return PageReading(corners, [readings[i] for i in read], dropped, read_again)


async def read_words(lines: Sequence[np.ndarray], settings: PageSettings, infer: Infer,
                     cancelled: Callable[[], bool] = lambda: False) -> tuple[list[Reading], int]:
    """Each line's reading, a line less sure than ``settings.read_again_below`` read again at other stretches, and
    by ``settings.second_recognizer`` where it names one, keeping the reading ``settings.read_again_keeps`` names
    (``str_ocr.read_again``); and how many lines were read again."""
    first = [greedy_decode(logits) for logits in await recognise(lines, settings, infer, cancelled)]
    if not settings.read_again_below:
        return first, 0

    def reader(step: str) -> Callable[[list[np.ndarray]], Awaitable[list[Reading]]]:
        return lambda grey: read_grey_lines(grey, settings, infer, cancelled, step)

    second = reader(SECOND_RECOGNIZER_STEP) if settings.second_recognizer else None
    return await read_again_served([denormalize(line[0]) for line in lines], first, settings.read_again_below,
                                   settings.lines, reader(RECOGNIZER_STEP), second, KEEPS[settings.read_again_keeps])


async def read_grey_lines(lines: Sequence[np.ndarray], settings: PageSettings, infer: Infer,
                          cancelled: Callable[[], bool] = lambda: False,
                          step: str = RECOGNIZER_STEP) -> list[Reading]:
    """The readings of grey ``[32, W]`` uint8 lines by ``step``'s recogniser, sent as ``settings.crop_batching``
    says (``recognise``)."""
    logits = await recognise([normalize(line)[np.newaxis] for line in lines], settings, infer, cancelled, step)
    return [greedy_decode(out) for out in logits]


async def recognise(lines: Sequence[np.ndarray], settings: PageSettings, infer: Infer,
                    cancelled: Callable[[], bool] = lambda: False, step: str = RECOGNIZER_STEP) -> list[np.ndarray]:
    """Each line's logits ``[W // 4 + 1, 37]`` from ``step``'s recogniser, the lines sent as
    ``settings.crop_batching`` says:

    - ``ragged``: each its own request, all at once, so that the recogniser's ragged batcher pools them with the
      lines of every other page in flight;
    - ``grouped``: lines of about the same width together (padded by at most ``group_padding``), each group its own
      request, all at once: fewer requests, still pooled across pages;
    - ``padded``: this page's lines in batches of ``max_crops_per_request``, each padded to its widest line;
    - ``none``: one at a time, each waiting for the last.

    At most ``max_requests_in_flight`` requests of a page wait at once, so that the pages in flight stay within the
    recogniser's bounded queue. Every request is awaited before the first failure is raised."""
    if settings.crop_batching == "none":
        logits = []
        for line in lines:
            if cancelled():
                raise Cancelled("the client cancelled the request")
            logits.append((await infer(step, line[np.newaxis]))[0])
        return logits
    if settings.crop_batching == "ragged":
        groups = [[index] for index in range(len(lines))]
    elif settings.crop_batching == "grouped":
        groups = width_groups([line.shape[-1] for line in lines], settings.group_padding,
                              settings.max_crops_per_request)
    else:
        size = settings.max_crops_per_request
        groups = [list(range(start, min(start + size, len(lines)))) for start in range(0, len(lines), size)]
    slots = asyncio.Semaphore(settings.max_requests_in_flight)

    async def send(group: list[int]) -> np.ndarray:
        async with slots:
            return await infer(step, padded_batch([lines[i] for i in group]))

    answers = await asyncio.gather(*(send(group) for group in groups), return_exceptions=True)
    if failed := next((answer for answer in answers if isinstance(answer, BaseException)), None):
        raise failed
    logits: list[np.ndarray] = [np.empty(0)] * len(lines)
    for group, answer in zip(groups, answers):
        for index, out in zip(group, answer):
            logits[index] = out[:output_length(lines[index].shape[-1])]
    return logits


def width_groups(widths: Sequence[int], padding: float, size: int) -> list[list[int]]:
    """Indices of ``widths`` in groups of at most ``size``, each group's widest at most ``1 + padding`` times its
    narrowest."""
    groups: list[list[int]] = []
    for index in np.argsort(widths, kind="stable").tolist():
        if groups and len(groups[-1]) < size and widths[index] <= (1 + padding) * widths[groups[-1][0]]:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def padded_batch(lines: Sequence[np.ndarray]) -> np.ndarray:
    """``[N, 1, 32, W]``: the lines ``[1, 32, w]``, each extended to the widest by repeating its last column."""
    width = max(line.shape[-1] for line in lines)
    return np.stack([np.pad(line, ((0, 0), (0, 0), (0, width - line.shape[-1])), mode="edge") for line in lines])
