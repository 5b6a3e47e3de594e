"""Triton Python-backend adapter for the text recogniser: requests -> tensors -> str_ocr -> responses.

All settings come from the model config's ``parameters`` (see ``str_ocr.serving``). Padding spent on
ragged batches is exported as the counter ``str_ocr_columns_total{kind="real"|"padding"}``.
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
        self.columns_family = pb_utils.MetricFamily(
            name="str_ocr_columns_total",
            description="Input columns run through the recogniser: the lines' own (real) and padding",
            kind=pb_utils.MetricFamily.COUNTER,
        )
        labels = {"model": args["model_name"], "version": args["model_version"], "instance": args["model_instance_name"]}
        self.columns_metric = {k: self.columns_family.Metric(labels={**labels, "kind": k}) for k in ("real", "padding")}
        self.first_batch_logged = False

    def execute(self, requests):
        inputs = [_input_array(pb_utils.get_input_tensor_by_name(r, INPUT_NAME)) for r in requests]
        if not self.first_batch_logged:
            where = sorted({"cpu" if isinstance(x, np.ndarray) else str(x.device) for x in inputs})
            pb_utils.Logger.log_info(f"first batch: inputs on {', '.join(where)}, running on {self.recognizer.device}")
            self.first_batch_logged = True
        before = self.recognizer.columns
        responses = [_response(result) for result in self.recognizer(inputs)]
        added = self.recognizer.columns - before
        self.columns_metric["real"].increment(added.real)
        self.columns_metric["padding"].increment(added.padding)
        return responses

    def finalize(self):
        self.columns_metric = None  # metrics before their family, as the backend requires
        self.columns_family = None
        self.recognizer = None
