"""Triton Python-backend adapter: CTC logits ``[T, 37]`` -> the text they say and its confidence in [0, 1].

Given the line the logits came from too (``LINE``, as in the ``ocr`` ensemble), it reads a line it is less sure
of than ``read_again_below`` again at other stretches through text_recognition (BLS), each line its own request, and
through the recogniser with second weights that ``second_recognizer`` names (as served and at those stretches); it
keeps the reading ``read_again_keeps`` names (``str_ocr.read_again``). Where a recogniser cannot (its queue full),
the readings before stand. Settings: ``str_ocr.contract.POSTPROCESS_PARAMETERS`` (see ``str_ocr.settings``). Its counter
(``str_ocr_triton.metric_labels``): the lines read again.
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr.contract import CONFIDENCE, LINE, LOGITS, TEXT, output_length
from str_ocr.page import RECOGNIZER_STEP, SECOND_RECOGNIZER_STEP, PageSettings
from str_ocr.read_again import KEEPS, read_logits_again
from str_ocr.settings import model_parameters, postprocess_settings
from str_ocr_triton.adapter import InstanceCounter, answer_all, input_array
from str_ocr_triton.calls import calling, limited, reader_keeping_readings
from str_ocr_triton.metric_labels import READ_AGAIN_COUNTER


def outputs(readings):
    texts = np.array([[r.text.encode()] for r in readings], dtype=np.object_)
    confidences = np.array([[r.confidence] for r in readings], dtype=np.float32)
    return [pb_utils.Tensor(TEXT, texts), pb_utils.Tensor(CONFIDENCE, confidences)]


class TritonPythonModel:
    def initialize(self, args):
        self.settings = postprocess_settings(model_parameters(json.loads(args["model_config"])))
        self.max_steps = output_length(self.settings.lines.max_width)
        # As ocr_page sends its crops: each line its own request, pooled by the recogniser's ragged batcher.
        self.sending = PageSettings(crop_batching="ragged",
                                    max_requests_in_flight=self.settings.max_requests_in_flight)
        self.read_again = InstanceCounter(args, READ_AGAIN_COUNTER)
        self.infer = calling(self.settings.second_recognizer)

    async def execute(self, requests):
        infer = limited(self.infer, self.settings.max_requests_in_flight)
        return await answer_all(requests, lambda request: self.reading(request, infer))

    async def reading(self, request, infer):
        def reader(step):
            return reader_keeping_readings(step, self.sending, infer, request.is_cancelled)

        line = pb_utils.get_input_tensor_by_name(request, LINE)
        second = reader(SECOND_RECOGNIZER_STEP) if self.settings.second_recognizer else None
        readings, read_again = await read_logits_again(
            input_array(request, LOGITS), None if line is None else line.as_numpy(), self.max_steps,
            self.settings.read_again_below, self.settings.lines, reader(RECOGNIZER_STEP), second,
            KEEPS[self.settings.read_again_keeps])
        self.read_again.increment(read_again)
        return outputs(readings)

    def finalize(self):
        self.read_again.close()
