"""Triton Python-backend adapter for whole images: one PNG or JPEG in, every word's box, text and confidence out.

It calls text_detection, cuts the words out (``str_ocr.page``), and sends them to text_recognition (BLS) the way
``crop_batching`` says: by default each crop its own request, so that the recogniser's ragged batcher pools the
crops of every page in flight. Settings: ``str_ocr.contract.PAGE_PARAMETERS`` (see ``str_ocr.settings``). The
counter ``str_ocr_page_boxes_dropped_total`` counts the boxes and words dropped past ``max_boxes`` and ``max_words``.
"""

import asyncio
import json

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr.contract import (BOXES, CONFIDENCES, DETECTOR, DETECTOR_INPUT, DETECTOR_OUTPUT, IMAGE, INPUT_NAME,
                              OUTPUT_NAME, RECOGNIZER, TEXTS)
from str_ocr.page import Cancelled, read_page
from str_ocr.settings import model_parameters, page_settings
from str_ocr_triton.adapter import error_response, input_array
from str_ocr_triton.metric_labels import instance_labels

CALLS = {"detector": (DETECTOR, DETECTOR_INPUT, DETECTOR_OUTPUT), "recognizer": (RECOGNIZER, INPUT_NAME, OUTPUT_NAME)}


class CalledModelError(Exception):
    """A model ocr_page called answered with an error: the page's answer keeps its code (UNAVAILABLE when the
    recogniser's queue is full tells the client to retry)."""

    def __init__(self, model, error):
        super().__init__(f"{model}: {error.message()}")
        self.triton_error = pb_utils.TritonError(str(self), error.code())


def outputs(page):
    texts = np.array([reading.text.encode() for reading in page.readings], dtype=np.object_)
    confidences = np.array([reading.confidence for reading in page.readings], dtype=np.float32)
    return [pb_utils.Tensor(BOXES, page.corners.astype(np.float32)), pb_utils.Tensor(TEXTS, texts),
            pb_utils.Tensor(CONFIDENCES, confidences)]


class TritonPythonModel:
    def initialize(self, args):
        self.settings = page_settings(model_parameters(json.loads(args["model_config"])))
        self.family = pb_utils.MetricFamily(name="str_ocr_page_boxes_dropped_total", kind=pb_utils.MetricFamily.COUNTER,
                                            description="Text boxes and words dropped past max_boxes or max_words")
        self.dropped = self.family.Metric(labels=instance_labels(args["model_name"], args["model_version"],
                                                                 args["model_instance_name"]))

    async def execute(self, requests):
        return list(await asyncio.gather(*(self.answer(request) for request in requests)))

    async def answer(self, request):
        try:
            page = await read_page(input_array(request, IMAGE).tobytes(), self.settings, self.infer,
                                   request.is_cancelled)
            if page.dropped:
                pb_utils.Logger.log_warn(f"a page had {page.dropped} boxes or words past max_boxes="
                                         f"{self.settings.max_boxes} or max_words={self.settings.max_words}: dropped")
                self.dropped.increment(page.dropped)
            return pb_utils.InferenceResponse(output_tensors=outputs(page))
        except (Cancelled, asyncio.CancelledError):
            return pb_utils.InferenceResponse(error=pb_utils.TritonError("the client cancelled the request",
                                                                        pb_utils.TritonError.CANCELLED))
        except CalledModelError as error:
            return pb_utils.InferenceResponse(error=error.triton_error)
        except Exception as error:  # noqa: BLE001 - this request's answer
            return error_response(error)

    async def infer(self, step, array):
        model, input_name, output_name = CALLS[step]
        response = await pb_utils.InferenceRequest(
            model_name=model, inputs=[pb_utils.Tensor(input_name, array)], requested_output_names=[output_name],
            preferred_memory=pb_utils.PreferredMemory(pb_utils.TRITONSERVER_MEMORY_CPU, 0)).async_exec()
        if response.has_error():
            raise CalledModelError(model, response.error())
        return pb_utils.get_output_tensor_by_name(response, output_name).as_numpy()

    def finalize(self):
        self.dropped = None  # the metric before its family, as the backend requires
        self.family = None
