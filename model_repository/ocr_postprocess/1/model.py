"""Triton Python-backend adapter: CTC logits ``[T, 37]`` -> the text they say and its confidence in [0, 1]."""

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr import greedy_decode_batch
from str_ocr.contract import CONFIDENCE, LOGITS, TEXT
from str_ocr_server.adapter import answer_each, input_array


def _reading(request):
    readings = greedy_decode_batch(input_array(request, LOGITS))
    texts = np.array([[r.text.encode()] for r in readings], dtype=np.object_)
    confidences = np.array([[r.confidence] for r in readings], dtype=np.float32)
    return [pb_utils.Tensor(TEXT, texts), pb_utils.Tensor(CONFIDENCE, confidences)]


class TritonPythonModel:
    def execute(self, requests):
        return answer_each(requests, _reading)
