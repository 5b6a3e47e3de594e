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
OCR = "ocr"
PREPROCESS = "ocr_preprocess"
POSTPROCESS = "ocr_postprocess"

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

# --- Shapes ------------------------------------------------------------------------------------------
INPUT_HEIGHT = 32
"""Height, in pixels, of every text line the recogniser reads."""
MIN_WIDTH = 4
"""The narrowest line the network takes: two 2x2 max-pools must each leave at least one column."""
MAX_WIDTH = 2048
"""The widest line a served recogniser accepts unless its config says otherwise."""
TUTORIAL_WIDTH = 100
"""The tutorial's fixed input width: 32x100 lines, 26 CTC time steps."""


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
}
"""ocr_preprocess's ``parameters`` and their defaults."""
POSTPROCESS_PARAMETERS = {
    "max_width": MAX_WIDTH,
}
"""ocr_postprocess's ``parameters`` and their defaults: it refuses logits of more time steps than a line this wide gives."""
PYTHON_BACKEND_PARAMETERS = ("FORCE_CPU_ONLY_INPUT_TENSORS", "EXECUTION_ENV_PATH")
"""Parameters the Python backend itself reads."""


# --- Serving -----------------------------------------------------------------------------------------
class Ports(NamedTuple):
    http: int
    grpc: int
    metrics: int


DEFAULT_PORTS = Ports(http=8000, grpc=8001, metrics=8002)
"""tritonserver's own defaults, which the launcher, the image and the clients keep."""
