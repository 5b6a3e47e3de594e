"""Triton Python-backend adapter for the text recogniser: requests -> tensors -> str_ocr -> responses.

All settings come from the model config's ``parameters`` (see ``str_ocr.serving``). Two Prometheus
counters tell what the instance did besides reading lines: ``str_ocr_columns_total{kind="real"|"padding"}``,
the columns computed for ragged batches, and ``str_ocr_clamped_lines_total{kind="nonfinite"|"out_of_range"}``,
the lines whose values were put back into [-1, 1] before the network read them.
"""

import json
from pathlib import Path

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from torch.utils.dlpack import to_dlpack

from str_ocr.contract import INPUT_NAME, OUTPUT_NAME
from str_ocr.serving import build_recognizer
from str_ocr_triton.adapter import responses
from str_ocr_triton.metric_labels import instance_labels

COUNTERS = {  # name: (description, the Recognizer's running count, its kinds)
    "str_ocr_columns_total": ("Input columns run through the recogniser: the lines' own (real) and padding",
                              "columns", ("real", "padding")),
    "str_ocr_clamped_lines_total": ("Lines with values outside [-1, 1] (NaN or infinite, or finite out of range), "
                                    "clamped before the recogniser read them", "clamped",
                                    ("nonfinite", "out_of_range")),
}


def _input_array(tensor):
    """The request's input without a copy: a numpy view in CPU memory, a torch tensor (DLPack) on a GPU."""
    if tensor.is_cpu():
        return tensor.as_numpy()
    return torch.from_dlpack(tensor.to_dlpack())


def _outputs(result):
    """The logits of one request, or its error as it is."""
    if isinstance(result, Exception):
        return result
    if result.is_cuda:
        return [pb_utils.Tensor.from_dlpack(OUTPUT_NAME, to_dlpack(result.contiguous()))]
    return [pb_utils.Tensor(OUTPUT_NAME, np.ascontiguousarray(result.numpy()))]


class TritonPythonModel:
    def initialize(self, args):
        self.recognizer = build_recognizer(
            json.loads(args["model_config"]),
            Path(args["model_repository"], args["model_version"]),
            instance_kind=args["model_instance_kind"],
            device_id=int(args["model_instance_device_id"]),
        )
        labels = instance_labels(args["model_name"], args["model_version"], args["model_instance_name"])
        self.families = {name: pb_utils.MetricFamily(name=name, description=text, kind=pb_utils.MetricFamily.COUNTER)
                         for name, (text, _, _) in COUNTERS.items()}
        self.counters = {(name, kind): self.families[name].Metric(labels={**labels, "kind": kind})
                         for name, (_, _, kinds) in COUNTERS.items() for kind in kinds}
        self.first_batch_logged = False

    def execute(self, requests):
        inputs = [_input_array(pb_utils.get_input_tensor_by_name(r, INPUT_NAME)) for r in requests]
        if not self.first_batch_logged:
            where = sorted({"cpu" if isinstance(x, np.ndarray) else str(x.device) for x in inputs})
            pb_utils.Logger.log_info(f"first batch: inputs on {', '.join(where)}, running on {self.recognizer.device}")
            self.first_batch_logged = True
        before = {name: getattr(self.recognizer, count) for name, (_, count, _) in COUNTERS.items()}
        answers = responses([_outputs(result) for result in self.recognizer(inputs)])
        for name, (_, count, kinds) in COUNTERS.items():
            added = getattr(self.recognizer, count) - before[name]
            for kind in kinds:
                if value := getattr(added, kind):
                    self.counters[name, kind].increment(value)
        return answers

    def finalize(self):
        self.counters = None  # metrics before their families, as the backend requires
        self.families = None
        self.recognizer = None
