"""Triton Python-backend adapter: encoded image bytes -> the recogniser's normalised line ``[1, 32, W]``.

Settings (``parameters``): ``max_bytes``, ``max_pixels`` (checked from the file's header, before
decoding), ``min_width``, ``max_width`` (see ``str_ocr.serving``).
"""

import json

import triton_python_backend_utils as pb_utils

from str_ocr import InputError
from str_ocr.images import images_to_lines
from str_ocr.serving import image_limits, line_limits, model_parameters


def _error(error):
    code = pb_utils.TritonError.INVALID_ARG if isinstance(error, InputError) else pb_utils.TritonError.INTERNAL
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error), code))


class TritonPythonModel:
    def initialize(self, args):
        parameters = model_parameters(json.loads(args["model_config"]))
        self.images, self.lines = image_limits(parameters), line_limits(parameters)

    def execute(self, requests):
        responses = []
        for request in requests:
            images = pb_utils.get_input_tensor_by_name(request, "IMAGE").as_numpy()
            try:
                lines = images_to_lines(images, self.images, self.lines)
            except Exception as error:  # one bad image fails its own request only
                responses.append(_error(error))
                continue
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("LINE", lines)]))
        return responses
