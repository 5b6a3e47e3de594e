"""Triton Python-backend adapter for the text recogniser: requests -> tensors -> str_ocr -> responses.

All settings come from the model config's ``parameters`` (see ``str_ocr.serving``).
"""

import json
from pathlib import Path

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from torch.utils.dlpack import to_dlpack

from str_ocr import INPUT_NAME, OUTPUT_NAME, InputError
from str_ocr.serving import build_recognizer


def _input_array(tensor):
    """The request's input without a copy: a numpy view in CPU memory, a torch tensor (DLPack) on a GPU."""
    if tensor.is_cpu():
        return tensor.as_numpy()
    return torch.from_dlpack(tensor.to_dlpack())


def _response(result):
    if isinstance(result, Exception):
        code = pb_utils.TritonError.INVALID_ARG if isinstance(result, InputError) else pb_utils.TritonError.INTERNAL
        return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(result), code))
    if result.is_cuda:
        output = pb_utils.Tensor.from_dlpack(OUTPUT_NAME, to_dlpack(result.contiguous()))
    else:
        output = pb_utils.Tensor(OUTPUT_NAME, np.ascontiguousarray(result.numpy()))
    return pb_utils.InferenceResponse(output_tensors=[output])


class TritonPythonModel:
    def initialize(self, args):
        self.recognizer = build_recognizer(
            json.loads(args["model_config"]),
            Path(args["model_repository"], args["model_version"]),
            instance_kind=args["model_instance_kind"],
            device_id=int(args["model_instance_device_id"]),
        )

    def execute(self, requests):
        inputs = [_input_array(pb_utils.get_input_tensor_by_name(r, INPUT_NAME)) for r in requests]
        return [_response(result) for result in self.recognizer(inputs)]

    def finalize(self):
        self.recognizer = None
