"""The served models' contract: the names, shapes and numbers that the model adapters, the launcher, the
clients, the configs validator and the tests all agree on, each written here once.

Importing this module loads no torch, so that the launcher and the clients can read it cheaply.
"""

from __future__ import annotations

from typing import NamedTuple

from .text import NUM_CLASSES  # noqa: F401 - the class count belongs to the alphabet, in str_ocr.text

# --- Models ------------------------------------------------------------------------------------------
RECOGNIZER = "text_recognition"
RECOGNIZER_ONNX = "text_recognition_onnx"
SECOND_RECOGNIZER = "text_recognition_second"
"""The recogniser with second weights, which ``ocr`` has read the lines it is unsure of as well."""
OCR = "ocr"
PREPROCESS = "ocr_preprocess"
POSTPROCESS = "ocr_postprocess"
DETECTOR = "text_detection"
OCR_PAGE = "ocr_page"

MODEL_CALLS = {OCR_PAGE: (DETECTOR, RECOGNIZER), POSTPROCESS: (RECOGNIZER,)}
"""The models a Python model calls (BLS): Triton cannot see them in its config, as it sees an ensemble's steps.
Besides these, each calls the model its ``SECOND_RECOGNIZER_PARAMETER`` names, where it names one."""
SECOND_RECOGNIZER_PARAMETER = "second_recognizer"
"""``ocr_postprocess``'s and ``ocr_page``'s parameter naming a recogniser with second weights, which reads the lines
read again as well (``str_ocr.read_again``); empty, none."""

# --- Tensors -----------------------------------------------------------------------------------------
INPUT_NAME = "input.1"
"""The recogniser's input, FP32 ``[batch, 1, INPUT_HEIGHT, W]`` (the tutorial's ONNX names)."""
OUTPUT_NAME = "308"
"""The recogniser's output, FP32 ``[batch, output_length(W), NUM_CLASSES]``."""
WIDTHS_NAME = "widths"
"""The exported graphs' second input, INT64 ``[batch]``: each line's real width in a zero-padded batch. Internal to
the Python model: the served contract stays ``input.1`` -> ``308``."""
IMAGE = "IMAGE"
"""``ocr``'s input: the bytes of one encoded image file, UINT8 ``[1, bytes]``."""
LINE = "LINE"
"""``ocr_preprocess``'s output: one normalised line, FP32 ``[1, INPUT_HEIGHT, W]``."""
LOGITS = "LOGITS"
"""``ocr_postprocess``'s input: one line's logits, FP32 ``[T, NUM_CLASSES]``."""
TEXT = "TEXT"
CONFIDENCE = "CONFIDENCE"
DETECTOR_INPUT = "x"
"""The detector's input, FP32 ``[1, 3, H, W]`` (BGR scaled to [-1, 1], H and W multiples of 32): its ONNX names."""
DETECTOR_OUTPUT = "sigmoid_0.tmp_0"
"""The detector's output, FP32 ``[1, 1, H, W]``: the probability that each pixel is text."""
BOXES = "BOXES"
"""``ocr_page``'s output: FP32 ``[N, 4, 2]``, each word's corners (x, y) clockwise from top-left, in the image's
pixels."""
TEXTS = "TEXTS"
"""``ocr_page``'s output: TYPE_STRING ``[N]``, each word's text, in reading order."""
CONFIDENCES = "CONFIDENCES"
"""``ocr_page``'s output: FP32 ``[N]``, each word's reading confidence."""

# --- Shapes ------------------------------------------------------------------------------------------
INPUT_HEIGHT = 32
"""Height, in pixels, of every text line the recogniser reads."""
MIN_WIDTH = 4
"""The narrowest line the network takes: two 2x2 max-pools must each leave at least one column."""
MAX_WIDTH = 2048
"""The widest line a served recogniser accepts unless its config says otherwise."""
TUTORIAL_WIDTH = 100
"""The tutorial's fixed input width: 32x100 lines, 26 CTC time steps."""
LINE_STRETCH = 1.2
"""How much wider than its aspect ratio a line is scaled when no width is given: more columns a character, for faces
narrower than those the weights were trained on. ``ocr_preprocess``, ``ocr_postprocess`` and ``ocr_page`` take another
as their ``line_stretch`` parameter."""
UNSTRETCHED = 1.0
"""The line stretch that keeps a line's aspect ratio (a width factor of 1): an image as a user sends it."""
STRETCH_RANGE = (0.25, 4.0)
"""The line stretches allowed: a stretch is a width factor."""
READ_AGAIN_BELOW = 0.9
"""The confidence below which ``ocr`` (its ``ocr_postprocess`` step) reads a line again at other stretches and with
second weights (``str_ocr.read_again``); its ``read_again_below`` parameter takes another, 0 to read each line once.
``ocr_page`` reads each word once unless its own ``read_again_below`` says otherwise."""
READ_AGAIN_KEEPS = "most_agreed"
"""Which reading a line read again keeps (``str_ocr.read_again.KEEPS``): the text its readings again agree on most.
``ocr_postprocess``'s and ``ocr_page``'s ``read_again_keeps`` parameter takes ``most_confident`` instead."""


def output_length(width: int) -> int:
    """Number of CTC time steps for a line ``width`` pixels wide (100 -> 26)."""
    return width // 4 + 1


# --- Configurations ----------------------------------------------------------------------------------
TUTORIAL_VARIANTS = ("no_batching", "dynamic_batching", "dynamic_batching_2_instances", "queue_delay_100us")
"""The tutorial's configs of text_recognition, in ``configs/NAME.pbtxt`` (``--model-config-name NAME``)."""
VARIANTS = (*TUTORIAL_VARIANTS, "ragged_batching")
"""Every named config of text_recognition; ``config.pbtxt`` is the recommended one."""

ENGINES = ("torch", "onnxruntime", "openvino")
"""What text_recognition's ``engine`` parameter may name, besides ``auto`` (``str_ocr.engines``)."""
PRECISIONS = ("f32", "bf16")
"""What its ``precision`` parameter may name, besides ``auto``."""
RECOGNIZER_PARAMETERS = {
    "checkpoint": "",
    "output_channels": 512,
    "min_width": MIN_WIDTH,
    "max_width": MAX_WIDTH,
    "max_padding": 0.25,
    "cpu_threads": "auto",
    "channels_last": False,
    "engine": "auto",
    "precision": "auto",
}
"""text_recognition's ``parameters`` and their defaults (read by ``str_ocr.serving``)."""
PREPROCESS_PARAMETERS = {
    "max_bytes": 8 * 1024 * 1024,
    "max_pixels": 4_000_000,
    "min_width": MIN_WIDTH,
    "max_width": MAX_WIDTH,
    "line_stretch": LINE_STRETCH,
}
"""ocr_preprocess's ``parameters`` and their defaults."""
POSTPROCESS_PARAMETERS = {
    "min_width": MIN_WIDTH,
    "max_width": MAX_WIDTH,
    "line_stretch": LINE_STRETCH,
    "read_again_below": READ_AGAIN_BELOW,
    "read_again_keeps": READ_AGAIN_KEEPS,
    "max_requests_in_flight": 32,
    SECOND_RECOGNIZER_PARAMETER: "",
}
"""ocr_postprocess's ``parameters`` and their defaults: it refuses logits of more time steps than a line ``max_width``
wide gives, reads the lines it is given (``LINE``) again within the widths and from the stretch of
ocr_preprocess's, and has at most ``max_requests_in_flight`` of them waiting on the recogniser per instance."""
DETECTION_PARAMETERS = {
    "min_side": 736,
    "max_side": 2000,
    "threshold": 0.3,
    "box_threshold": 0.5,
    "unclip_ratio": 1.6,
}
"""How ``ocr_page`` sizes an image for text_detection and turns its probability map into boxes (PP-OCR's values)."""
PAGE_PARAMETERS = {
    **DETECTION_PARAMETERS,
    "max_bytes": PREPROCESS_PARAMETERS["max_bytes"],
    "max_pixels": 16_000_000,
    "min_width": MIN_WIDTH,
    "max_width": MAX_WIDTH,
    "line_stretch": LINE_STRETCH,
    "max_boxes": 500,
    "max_words": 1000,
    "word_gap": 0.15,
    "crop_batching": "ragged",
    "max_crops_per_request": 32,
    "group_padding": 0.25,
    "max_requests_in_flight": 32,
    "read_again_below": 0.0,
    "read_again_keeps": READ_AGAIN_KEEPS,
    SECOND_RECOGNIZER_PARAMETER: "",
}
"""ocr_page's ``parameters`` and their defaults."""
DETECTOR_PARAMETERS = {
    "max_side": 2048,
    "engine": "auto",
    "cpu_threads": "auto",
}
"""text_detection's ``parameters`` and their defaults: the largest side accepted (a multiple of 32), the engine
(``auto``, ``onnxruntime``, ``openvino``) and a CPU instance's threads."""
DETECTOR_ENGINES = ("onnxruntime", "openvino")
"""What text_detection's ``engine`` parameter may name, besides ``auto`` (``str_ocr.detection``)."""
PAGE_TENSORS = {IMAGE: ("input", "TYPE_UINT8", [-1]), BOXES: ("output", "TYPE_FP32", [-1, 4, 2]),
                TEXTS: ("output", "TYPE_STRING", [-1]), CONFIDENCES: ("output", "TYPE_FP32", [-1])}
"""ocr_page's tensors: (direction, type, dims), with ``max_batch_size: 0``."""
CROP_BATCHINGS = ("ragged", "grouped", "padded", "none")
"""How ocr_page sends a page's crops to text_recognition (``str_ocr.page.recognise``): each its own request, pooled
by the ragged batcher with the crops of every page in flight; in groups of about one width, pooled likewise; one
padded batch per page; one at a time."""
PYTHON_BACKEND_PARAMETERS = ("FORCE_CPU_ONLY_INPUT_TENSORS", "EXECUTION_ENV_PATH")
"""Parameters the Python backend itself reads."""


# --- Serving -----------------------------------------------------------------------------------------
class Ports(NamedTuple):
    http: int
    grpc: int
    metrics: int


DEFAULT_PORTS = Ports(http=8000, grpc=8001, metrics=8002)
"""tritonserver's own defaults, which the launcher, the image and the clients keep."""
