"""Triton Python-backend adapter for whole images: one PNG or JPEG in, every word's box, text and confidence out.

It calls text_detection, cuts the words out (``str_ocr.page``), and sends them to text_recognition (BLS) the way
``crop_batching`` says: by default each crop its own request, so that the recogniser's ragged batcher pools the
crops of every page in flight; the words it is less sure of than ``read_again_below`` it reads again, by
``second_recognizer`` too where that names a recogniser with second weights. Settings:
``str_ocr.contract.PAGE_PARAMETERS`` (see ``str_ocr.settings``). Its counters (``str_ocr_triton.metric_labels``):
the boxes and words dropped past ``max_boxes`` and ``max_words``, and the words read again.
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr.contract import BOXES, CONFIDENCES, IMAGE, TEXTS
from str_ocr.page import read_page
from str_ocr.settings import model_parameters, page_settings
from str_ocr_triton.adapter import InstanceCounter, answer_all, input_array
from str_ocr_triton.calls import calling
from str_ocr_triton.metric_labels import DROPPED_COUNTER, READ_AGAIN_COUNTER


def outputs(page):
    texts = np.array([reading.text.encode() for reading in page.readings], dtype=np.object_)
    confidences = np.array([reading.confidence for reading in page.readings], dtype=np.float32)
    return [pb_utils.Tensor(BOXES, page.corners.astype(np.float32)), pb_utils.Tensor(TEXTS, texts),
            pb_utils.Tensor(CONFIDENCES, confidences)]


class TritonPythonModel:
    def initialize(self, args):
        self.settings = page_settings(model_parameters(json.loads(args["model_config"])))
        self.infer = calling(self.settings.second_recognizer)
        self.dropped = InstanceCounter(args, DROPPED_COUNTER)
        self.read_again = InstanceCounter(args, READ_AGAIN_COUNTER)

    async def execute(self, requests):
        return await answer_all(requests, self.read)

    async def read(self, request):
        page = await read_page(input_array(request, IMAGE).tobytes(), self.settings, self.infer,
                               request.is_cancelled)
        if page.dropped:
            pb_utils.Logger.log_warn(f"a page had {page.dropped} boxes or words past max_boxes="
                                     f"{self.settings.max_boxes} or max_words={self.settings.max_words}: dropped")
            self.dropped.increment(page.dropped)
        self.read_again.increment(page.read_again)
        return outputs(page)

    def finalize(self):
        self.dropped.close()
        self.read_again.close()
