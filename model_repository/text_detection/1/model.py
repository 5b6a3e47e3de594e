"""Triton Python-backend adapter for the text detector: a normalised image -> the probability map of its text.

Settings (``parameters``, see ``str_ocr.settings.detector_serving``): ``max_side``, the largest side accepted;
``engine`` (``auto``: OpenVINO in bf16 on a CPU with native bf16, else ONNX Runtime); ``cpu_threads``. A GPU
instance runs on ONNX Runtime's CUDA provider.
"""

import json

import triton_python_backend_utils as pb_utils

from str_ocr.contract import DETECTOR_INPUT, DETECTOR_OUTPUT
from str_ocr.detection import DetectorSession, check_detector_input, choose_detector_engine, detector_path
from str_ocr.settings import detector_serving
from str_ocr_triton.adapter import answer_each, input_array


class TritonPythonModel:
    def initialize(self, args):
        settings = detector_serving(json.loads(args["model_config"]))
        gpu = args["model_instance_kind"] == "GPU"
        engine, precision = choose_detector_engine(settings.engine, gpu)
        self.max_side = settings.max_side
        self.detector = DetectorSession(detector_path(), settings.threads, engine, precision,
                                        int(args["model_instance_device_id"]) if gpu else None)
        pb_utils.Logger.log_info(f"text_detection on {engine} ({precision}), {settings.threads} thread(s)")

    def execute(self, requests):
        return answer_each(requests, self.probability)

    def probability(self, request):
        pixels = input_array(request, DETECTOR_INPUT)
        check_detector_input(pixels, self.max_side)
        return [pb_utils.Tensor(DETECTOR_OUTPUT, self.detector(pixels))]
