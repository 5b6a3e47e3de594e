"""Triton Python-backend adapter: CTC logits ``[T, 37]`` -> the text they say and its confidence in [0, 1].

Settings (``parameters``): ``max_width``, the widest line whose logits it reads (see ``str_ocr.settings``).
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr.contract import CONFIDENCE, LOGITS, TEXT, output_length
from str_ocr.settings import line_limits, model_parameters
from str_ocr.text import read_logits
from str_ocr_triton.adapter import answer_each, input_array


class TritonPythonModel:
    def initialize(self, args):
        parameters = model_parameters(json.loads(args["model_config"]))
        self.max_steps = output_length(line_limits(parameters).max_width)

    def execute(self, requests):
        return answer_each(requests, self.reading)

    def reading(self, request):
        readings = read_logits(input_array(request, LOGITS), self.max_steps)
        texts = np.array([[r.text.encode()] for r in readings], dtype=np.object_)
        confidences = np.array([[r.confidence] for r in readings], dtype=np.float32)
        return [pb_utils.Tensor(TEXT, texts), pb_utils.Tensor(CONFIDENCE, confidences)]
