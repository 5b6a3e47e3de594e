"""Finding text in a whole image: PP-OCR's DB detector, its input, and its probability map turned into boxes.

The detector (``ch_PP-OCRv4_det_infer.onnx``, Apache-2.0) is the file inside the pinned PyPI package
``rapidocr-onnxruntime``; nothing is fetched. It takes ``[1, 3, H, W]`` (BGR, H and W multiples of 32, scaled to
[-1, 1]) and gives the probability ``[1, 1, H, W]`` that each pixel lies in the shrunk core of a text region.

``find_boxes`` turns that map into rotated rectangles with array operations over all regions at once (connected
components, moments, extents along each region's axes, the DB "unclip" in closed form), where PaddleOCR's
post-processing walks the contours one by one.

    detector = DetectorSession(detector_path(), threads=1)
    pixels, scale = detector_input(rgb)
    boxes = find_boxes(detector(pixels)[0, 0], scale, rgb.shape[:2])
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .contract import DETECTION_PARAMETERS, DETECTOR_ENGINES, DETECTOR_INPUT
from .cpu_features import native_bf16
from .errors import InputError

DETECTOR_PACKAGE = "rapidocr_onnxruntime"
DETECTOR_FILE = "models/ch_PP-OCRv4_det_infer.onnx"
STRIDE = 32
"""The detector's input sides are multiples of this."""
ANGLE_STEP, ANGLE_STEPS = np.deg2rad(1.0), 2
"""The rotations around each region's principal axis tried for its smallest rectangle."""
MAX_CANDIDATES = 1000
"""Regions fitted with rectangles at most, the largest (PaddleOCR's ``max_candidates``)."""
SCORE_SAMPLES = (32, 6)
"""Points along and across each rectangle at which its score is read."""
TURN_GAIN = 0.95
"""A region's rectangle is turned only where that makes it this much smaller than upright: a word's ascenders at
one end and descenders at the other (\"big\") would otherwise tilt it."""


def detector_path() -> Path:
    """The detector's ONNX file, inside the installed ``rapidocr-onnxruntime`` package (not imported: only its file
    is used)."""
    spec = importlib.util.find_spec(DETECTOR_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the text detector comes with the PyPI package rapidocr-onnxruntime==1.4.4: "
                                "run `make setup` (or pip install it)")
    return Path(spec.origin).parent / DETECTOR_FILE


def copy_detector(destination: str | Path) -> Path:
    """The detector's file copied to ``destination`` (a model version folder's ``model.onnx``, for Triton's
    onnxruntime backend)."""
    destination = Path(destination)
    destination.write_bytes(detector_path().read_bytes())
    return destination


@dataclass(frozen=True)
class DetectorSettings:
    """How an image is sized for the detector and how its probability map becomes boxes (RapidOCR's values)."""

    min_side: int = DETECTION_PARAMETERS["min_side"]
    """The shorter side is scaled up to at least this many pixels..."""
    max_side: int = DETECTION_PARAMETERS["max_side"]
    """...and the longer side down to at most this many, which wins."""
    threshold: float = DETECTION_PARAMETERS["threshold"]
    """A pixel is text where the probability exceeds this."""
    box_threshold: float = DETECTION_PARAMETERS["box_threshold"]
    """A region is kept where its mean probability reaches this."""
    unclip_ratio: float = DETECTION_PARAMETERS["unclip_ratio"]
    """How far the shrunk core is grown back: by area * ratio / perimeter on every side."""
    min_size: float = 3.0
    """Regions whose shorter side (in the map's pixels) is below this are noise."""


@dataclass(frozen=True)
class Boxes:
    """Text regions: ``corners`` ``[N, 4, 2]`` float32, (x, y) clockwise from top-left in the image's pixels, and
    ``scores`` ``[N]``, the detector's mean probability over each region's rectangle."""

    corners: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)

    def take(self, index: np.ndarray) -> Boxes:
        return Boxes(self.corners[index], self.scores[index])

    @classmethod
    def empty(cls) -> Boxes:
        return cls(np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32))


def input_size(height: int, width: int, settings: DetectorSettings = DetectorSettings()) -> tuple[int, int]:
    """The detector's input ``(height, width)`` for an image of this size: the shorter side scaled up to
    ``min_side``, the longer side capped at ``max_side``, each rounded to a multiple of ``STRIDE``."""
    scale = max(1.0, settings.min_side / min(height, width))
    scale = min(scale, settings.max_side / max(height, width))
    return tuple(max(STRIDE, int(round(side * scale / STRIDE)) * STRIDE) for side in (height, width))


def detector_input(rgb: np.ndarray, settings: DetectorSettings = DetectorSettings()) -> tuple[np.ndarray, np.ndarray]:
    """``[1, 3, H, W]`` float32 for an RGB image ``[h, w, 3]`` uint8, and the ``(x, y)`` scale from the detector's
    pixels back to the image's."""
    height, width = rgb.shape[:2]
    size_h, size_w = input_size(height, width, settings)
    resized = cv2.resize(rgb, (size_w, size_h), interpolation=cv2.INTER_LINEAR)
    bgr = resized[:, :, ::-1].astype(np.float32)
    pixels = (bgr / 127.5 - 1.0).transpose(2, 0, 1)[np.newaxis]
    return np.ascontiguousarray(pixels), np.array([width / size_w, height / size_h], np.float32)


def check_detector_input(pixels: np.ndarray, max_side: int) -> None:
    """Raise ``InputError`` unless ``pixels`` is what ``detector_input`` makes: FP32 ``[1, 3, H, W]``, H and W
    multiples of ``STRIDE`` up to ``max_side``, values finite and within [-1, 1]."""
    expected = f"FP32 [1, 3, height, width], sides multiples of {STRIDE} up to {max_side}"
    if pixels.dtype != np.float32 or pixels.ndim != 4 or pixels.shape[:2] != (1, 3):
        raise InputError(f"{DETECTOR_INPUT} must be {expected}; got {pixels.dtype} {list(pixels.shape)}")
    if any(side < STRIDE or side > max_side or side % STRIDE for side in pixels.shape[2:]):
        raise InputError(f"{DETECTOR_INPUT} must be {expected}; got {list(pixels.shape)}")
    if not np.isfinite(pixels).all() or np.abs(pixels).max() > 1.0 + 1e-6:
        raise InputError(f"{DETECTOR_INPUT} must hold finite values in [-1, 1] (BGR / 127.5 - 1)")


def choose_detector_engine(requested: str, gpu: bool) -> tuple[str, str]:
    """``(engine, precision)`` for ``requested``: ``auto`` is OpenVINO in bf16 on a CPU with native bf16 (the faster,
    ``docs/pages.md``), else ONNX Runtime in f32; on a GPU, ONNX Runtime's CUDA provider."""
    if requested not in ("auto", *DETECTOR_ENGINES):
        raise ValueError(f"engine must be auto or one of {', '.join(DETECTOR_ENGINES)}; got {requested!r}")
    if gpu:
        if requested == "openvino":
            raise ValueError("engine 'openvino' runs on CPU instances only: use 'auto' or 'onnxruntime' on a GPU")
        return "onnxruntime", "f32"
    if requested == "auto":
        return ("openvino", "bf16") if native_bf16() else ("onnxruntime", "f32")
    return requested, "f32"


class DetectorSession:
    """The detector on ``engine``: ONNX Runtime (the CPU provider with ``threads`` threads, or CUDA's on device
    ``cuda_device``) or OpenVINO on the CPU in ``precision``."""

    def __init__(self, path: Path, threads: int = 1, engine: str = "onnxruntime", precision: str = "f32",
                 cuda_device: int | None = None) -> None:
        if engine == "openvino":
            import openvino  # noqa: PLC0415 - only this engine needs it

            settings = {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": precision,
                        "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1, "ENABLE_CPU_PINNING": False}
            model = openvino.Core().compile_model(str(path), "CPU", settings)
            self.run = lambda pixels: model(pixels)[0]
            return
        import onnxruntime  # noqa: PLC0415 - only this engine needs it

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        providers: list = ["CPUExecutionProvider"]
        if cuda_device is not None:
            providers.insert(0, ("CUDAExecutionProvider", {"device_id": cuda_device}))
        session = onnxruntime.InferenceSession(str(path), options, providers=providers)
        self.run = lambda pixels: session.run(None, {DETECTOR_INPUT: pixels})[0]

    def __call__(self, pixels: np.ndarray) -> np.ndarray:
        return self.run(pixels)


def find_boxes(probability: np.ndarray, scale: np.ndarray, image_size: tuple[int, int],
               settings: DetectorSettings = DetectorSettings()) -> Boxes:
    """The text regions of a probability map ``[H, W]``, as rectangles in the image's pixels (``image_size``:
    ``(height, width)``), in no particular order.

    The regions are found by their outlines (a region's extents are its outline's), the ``MAX_CANDIDATES``
    largest fitted with rectangles and scored by the mean probability over them, every region at once: no pass
    over the map per region."""
    text = (probability > settings.threshold).astype(np.uint8)
    text = cv2.dilate(text, np.ones((2, 2), np.uint8))
    outlines, _ = cv2.findContours(text, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if len(outlines) > MAX_CANDIDATES:  # a map of noise: its largest regions only, as PaddleOCR's max_candidates
        outlines = sorted(outlines, key=len, reverse=True)[:MAX_CANDIDATES]
    if not outlines:
        return Boxes.empty()
    points = np.concatenate(outlines)[:, 0, :].astype(np.float64)
    region = np.repeat(np.arange(len(outlines)), [len(outline) for outline in outlines])
    centres, axes, extents = _oriented_extents(points[:, 0], points[:, 1], region, len(outlines))
    grown = extents + settings.unclip_ratio * (extents.prod(axis=1) / extents.sum(axis=1))[:, np.newaxis]
    large = (extents.min(axis=1) >= settings.min_size) & (grown.min(axis=1) >= settings.min_size + 2)
    centres, axes, extents, grown = centres[large], axes[large], extents[large], grown[large]
    scores = _mean_within(probability, centres, axes, extents)
    keep = scores >= settings.box_threshold
    corners = _corners(centres[keep], axes[keep], grown[keep]) * scale
    corners[..., 0] = np.clip(corners[..., 0], 0, image_size[1])
    corners[..., 1] = np.clip(corners[..., 1], 0, image_size[0])
    return Boxes(corners.astype(np.float32), scores[keep].astype(np.float32))


def _mean_within(probability: np.ndarray, centres: np.ndarray, along: np.ndarray, extents: np.ndarray) -> np.ndarray:
    """Each rectangle's mean probability, read at a grid of ``SCORE_SAMPLES`` points spread over it (PaddleOCR's
    "fast" score averages the map over the rectangle's polygon)."""
    across = np.stack([-along[:, 1], along[:, 0]], axis=1)
    u, v = ((np.arange(n) + 0.5) / n - 0.5 for n in SCORE_SAMPLES)
    grid_u, grid_v = (grid.ravel() for grid in np.meshgrid(u, v, indexing="ij"))  # every (u, v) pair once
    samples = (centres[:, np.newaxis]
               + (grid_u[np.newaxis, :, np.newaxis] * extents[:, np.newaxis, :1]) * along[:, np.newaxis]
               + (grid_v[np.newaxis, :, np.newaxis] * extents[:, np.newaxis, 1:]) * across[:, np.newaxis])
    x = np.clip(np.rint(samples[..., 0]).astype(np.int64), 0, probability.shape[1] - 1)
    y = np.clip(np.rint(samples[..., 1]).astype(np.int64), 0, probability.shape[0] - 1)
    return probability[y, x].mean(axis=1)


def _oriented_extents(xs: np.ndarray, ys: np.ndarray, region: np.ndarray, count: int):
    """Each region's smallest enclosing rectangle: centre ``[R, 2]``, the unit vector of its side nearer horizontal
    ``[R, 2]`` (pointing right), and the extents along that side and across it ``[R, 2]``, for every region at once.

    The candidates are the rectangles along the image's axes, along the region's principal axis (a rectangle's
    principal axes are its sides) and at steps of ``ANGLE_STEP`` around it, where ascenders and descenders pull the
    principal axis off the line of the text; the one of least area wins, a turned one only where it is
    ``TURN_GAIN`` times the upright one's or less."""
    sizes = np.maximum(np.bincount(region, minlength=count), 1)
    mean = np.stack([np.bincount(region, xs, count), np.bincount(region, ys, count)], axis=1) / sizes[:, np.newaxis]
    dx, dy = xs - mean[region, 0], ys - mean[region, 1]
    cxx, cyy, cxy = (np.bincount(region, a * b, count) for a, b in ((dx, dx), (dy, dy), (dx, dy)))
    principal = 0.5 * np.arctan2(2 * cxy, cxx - cyy)
    principal = (principal + np.pi / 4) % (np.pi / 2) - np.pi / 4  # the axis nearer horizontal, pointing right
    order = np.argsort(region, kind="stable")
    rows, dx, dy = region[order], dx[order], dy[order]
    starts = np.searchsorted(rows, np.arange(count))
    best_area = np.full(count, np.inf)
    angle, low, high = np.zeros(count), np.zeros((count, 2)), np.zeros((count, 2))
    upright = np.zeros(count)  # the first candidate; a turned one must be TURN_GAIN smaller to win
    for candidate in [upright, *(principal + k * ANGLE_STEP for k in range(-ANGLE_STEPS, ANGLE_STEPS + 1))]:
        cos, sin = np.cos(candidate)[rows], np.sin(candidate)[rows]
        u, v = dx * cos + dy * sin, dy * cos - dx * sin
        lows = np.stack([np.minimum.reduceat(u, starts), np.minimum.reduceat(v, starts)], axis=1)
        highs = np.stack([np.maximum.reduceat(u, starts), np.maximum.reduceat(v, starts)], axis=1)
        area = (highs - lows + 1).prod(axis=1)
        better = area < best_area
        best_area[better], angle[better] = area[better], candidate[better]
        low[better], high[better] = lows[better], highs[better]
        best_area *= TURN_GAIN if candidate is upright else 1.0
    along = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    across = np.stack([-along[:, 1], along[:, 0]], axis=1)
    middle = (low + high) / 2
    centres = mean + along * middle[:, :1] + across * middle[:, 1:]
    return centres, along, high - low + 1  # pixel centres span max - min; the pixels themselves one more


def _corners(centres: np.ndarray, along: np.ndarray, extents: np.ndarray) -> np.ndarray:
    """``[R, 4, 2]``: top-left, top-right, bottom-right, bottom-left of each rectangle."""
    across = np.stack([-along[:, 1], along[:, 0]], axis=1)  # pointing down, in image coordinates
    half_u = along * extents[:, :1] / 2
    half_v = across * extents[:, 1:] / 2
    return np.stack([centres - half_u - half_v, centres + half_u - half_v,
                     centres + half_u + half_v, centres - half_u + half_v], axis=1)


def reading_order(corners: np.ndarray) -> np.ndarray:
    """The order in which to read boxes ``[N, 4, 2]``: lines top to bottom, each left to right, along the page's
    own slant (the median slant of the boxes' top edges). Boxes belong to one line where their centres lie within
    half the line's height of it."""
    if len(corners) == 0:
        return np.zeros(0, np.int64)
    top = corners[:, 1] - corners[:, 0]
    slant = float(np.median(np.arctan2(top[:, 1], top[:, 0])))
    centres = corners.mean(axis=1) @ np.array([[np.cos(slant), -np.sin(slant)], [np.sin(slant), np.cos(slant)]])
    across, along = centres[:, 1], centres[:, 0]  # the centres turned back by the slant
    height = np.linalg.norm(corners[:, 3] - corners[:, 0], axis=1)
    lines, line_of = [], np.empty(len(corners), np.int64)
    for index in np.argsort(across, kind="stable"):
        if not lines or abs(across[index] - lines[-1][0]) > max(lines[-1][1], height[index]) / 2:
            lines.append((across[index], height[index]))
        line_of[index] = len(lines) - 1
    return np.lexsort((along, line_of))
