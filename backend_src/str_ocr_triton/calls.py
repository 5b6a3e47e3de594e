"""Calling the server's other models from a Python model (BLS): ``ocr_page`` calls the detector and the recogniser,
``ocr_postprocess`` the recogniser, for the lines it reads again; either, the recogniser with second weights that its
``second_recognizer`` parameter names.

Imported only inside Triton's Python backend, where ``triton_python_backend_utils`` exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr.contract import DETECTOR, DETECTOR_INPUT, DETECTOR_OUTPUT, INPUT_NAME, OUTPUT_NAME, RECOGNIZER
from str_ocr.page import DETECTOR_STEP, RECOGNIZER_STEP, SECOND_RECOGNIZER_STEP, Infer, PageSettings, read_grey_lines
from str_ocr.read_again import ServedLineReader
from str_ocr.text import Reading

CALLS = {DETECTOR_STEP: (DETECTOR, DETECTOR_INPUT, DETECTOR_OUTPUT),
         RECOGNIZER_STEP: (RECOGNIZER, INPUT_NAME, OUTPUT_NAME)}
"""The models ``infer`` reaches, by the step ``str_ocr.page.Infer`` names: the model, its input and its output."""


class CalledModelError(Exception):
    """A called model answered with an error: the caller's answer keeps its code (UNAVAILABLE when the
    recogniser's queue is full tells the client to retry)."""

    def __init__(self, model: str, error: pb_utils.TritonError) -> None:
        super().__init__(f"{model}: {error.message()}")
        self.triton_error = pb_utils.TritonError(str(self), error.code())


def calling(second_recognizer: str = "") -> Infer:
    """``infer(step, array)``: ``step``'s model's output for ``array``, in CPU memory (``CalledModelError`` where it
    answers with an error); the second recogniser's step reaches the model ``second_recognizer``."""
    calls = {**CALLS, SECOND_RECOGNIZER_STEP: (second_recognizer, INPUT_NAME, OUTPUT_NAME)} if second_recognizer \
        else CALLS

    async def infer(step: str, array: np.ndarray) -> np.ndarray:
        model, input_name, output_name = calls[step]
        response = await pb_utils.InferenceRequest(
            model_name=model, inputs=[pb_utils.Tensor(input_name, array)], requested_output_names=[output_name],
            preferred_memory=pb_utils.PreferredMemory(pb_utils.TRITONSERVER_MEMORY_CPU, 0)).async_exec()
        if response.has_error():
            raise CalledModelError(model, response.error())
        return pb_utils.get_output_tensor_by_name(response, output_name).as_numpy()

    return infer


def limited(infer: Infer, count: int) -> Infer:
    """``infer`` with at most ``count`` of its calls waiting at once. A model that is not decoupled runs one
    ``execute`` at a time per instance: one made in each ``execute`` bounds what an instance has waiting."""
    slots = asyncio.Semaphore(count)

    async def infer_limited(step: str, array: np.ndarray) -> np.ndarray:
        async with slots:
            return await infer(step, array)

    return infer_limited


def reader_keeping_readings(step: str, sending: PageSettings, infer: Infer,
                            cancelled: Callable[[], bool]) -> ServedLineReader:
    """``str_ocr.page.read_grey_lines`` through ``step``'s recogniser, or None, logged, where it answers with an
    error (its queue full): the caller keeps the readings it has."""
    async def read(lines: list[np.ndarray]) -> list[Reading] | None:
        try:
            return await read_grey_lines(lines, sending, infer, cancelled, step)
        except CalledModelError as error:
            pb_utils.Logger.log_warn(f"{len(lines)} lines not read again by the {step}, the readings before kept: "
                                     f"{error}")
            return None

    return read
