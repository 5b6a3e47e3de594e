"""Each served model's inputs, built, and its outputs, read: the one place a client spells the tensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tritonclient.grpc import InferInput, InferResult
from tritonclient.utils import np_to_triton_dtype

from str_ocr.contract import (BOXES, CONFIDENCE, CONFIDENCES, IMAGE, INPUT_HEIGHT, INPUT_NAME, OUTPUT_NAME, TEXT,
                              TEXTS, TUTORIAL_WIDTH)


def tensor(name: str, array: np.ndarray, datatype: str | None = None) -> InferInput:
    """An input named ``name`` holding ``array`` (its Triton type follows the array's dtype unless given)."""
    tensor = InferInput(name, list(array.shape), datatype or np_to_triton_dtype(array.dtype))
    tensor.set_data_from_numpy(array)
    return tensor


def recognizer_inputs(lines: np.ndarray, datatype: str | None = None) -> list[InferInput]:
    """text_recognition's inputs: ``lines`` ``[N, 1, 32, W]``, normalised to [-1, 1]."""
    return [tensor(INPUT_NAME, lines, datatype)]


def image_inputs(data: bytes) -> list[InferInput]:
    """ocr's inputs: the bytes of one encoded image file, as a ``[1, bytes]`` UINT8 row."""
    return [tensor(IMAGE, np.frombuffer(data, dtype=np.uint8)[np.newaxis])]


def page_inputs(data: bytes) -> list[InferInput]:
    """ocr_page's inputs: the bytes of one encoded image file, as a ``[bytes]`` UINT8 vector."""
    return [tensor(IMAGE, np.frombuffer(data, dtype=np.uint8))]


@dataclass(frozen=True)
class PageWord:
    """A word ocr_page read: its corners ``[4, 2]`` (clockwise from top-left, in the image's pixels), its text and
    the confidence of that reading."""

    corners: np.ndarray
    text: str
    confidence: float


def words_of(result: InferResult) -> list[PageWord]:
    """What ocr_page read in one image, in reading order."""
    return [PageWord(corners, text.decode(), float(confidence)) for corners, text, confidence
            in zip(result.as_numpy(BOXES), result.as_numpy(TEXTS), result.as_numpy(CONFIDENCES))]


def logits_of(result: InferResult) -> np.ndarray:
    """text_recognition's logits, ``[N, W // 4 + 1, 37]``."""
    return result.as_numpy(OUTPUT_NAME)


def text_of(result: InferResult) -> tuple[str, float]:
    """What ocr read in one image, and its confidence."""
    return result.as_numpy(TEXT)[0, 0].decode(), float(result.as_numpy(CONFIDENCE)[0, 0])


def random_lines(batch: int = 2, width: int = TUTORIAL_WIDTH, seed: int = 0, dtype: type = np.float32) -> np.ndarray:
    """The tutorial's request: ``[batch, 1, 32, width]`` values in [-1, 1]."""
    return np.random.default_rng(seed).uniform(-1, 1, (batch, 1, INPUT_HEIGHT, width)).astype(dtype)
