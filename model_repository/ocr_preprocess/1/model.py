"""Triton Python-backend adapter: encoded image bytes -> the recogniser's normalised line ``[1, 32, W]``.

Settings (``parameters``): ``max_bytes``, ``max_pixels`` (checked from the file's header, before
decoding), ``min_width``, ``max_width``, ``line_stretch`` (see ``str_ocr.settings``).
"""

import json

import triton_python_backend_utils as pb_utils

from str_ocr.contract import IMAGE, LINE
from str_ocr.images import images_to_lines
from str_ocr.settings import image_limits, line_limits, model_parameters
from str_ocr_triton.adapter import answer_each, input_array


class TritonPythonModel:
    def initialize(self, args):
        parameters = model_parameters(json.loads(args["model_config"]))
        self.images, self.lines = image_limits(parameters), line_limits(parameters, stretched=True)

    def execute(self, requests):
        return answer_each(requests, self.line_of)

    def line_of(self, request):
        lines = images_to_lines(input_array(request, IMAGE), self.images, self.lines)
        return [pb_utils.Tensor(LINE, lines)]
