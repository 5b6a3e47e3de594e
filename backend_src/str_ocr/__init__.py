"""str_ocr: scene-text recognition (None-ResNet-None-CTC) for serving with Triton.

No Triton import anywhere in this package: the model repository's ``model.py`` files are thin
adapters over it, and everything here is testable on its own.
"""

from .checkpoint import CheckpointMismatchError, load_model, save_checkpoint
from .model import INPUT_HEIGHT, MIN_WIDTH, STRModel, output_length
from .preprocess import denormalize, normalize
from .recognizer import INPUT_NAME, OUTPUT_NAME, InputError, LineLimits, Recognizer
from .text import ALPHABET, BLANK, NUM_CLASSES, Reading, greedy_decode, greedy_decode_batch

__all__ = [
    "ALPHABET",
    "BLANK",
    "CheckpointMismatchError",
    "INPUT_HEIGHT",
    "INPUT_NAME",
    "InputError",
    "LineLimits",
    "MIN_WIDTH",
    "NUM_CLASSES",
    "OUTPUT_NAME",
    "Reading",
    "Recognizer",
    "STRModel",
    "denormalize",
    "greedy_decode",
    "greedy_decode_batch",
    "load_model",
    "normalize",
    "output_length",
    "save_checkpoint",
]
