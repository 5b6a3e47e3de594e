"""Triton Python-backend adapter: CTC logits ``[T, 37]`` -> the text they say and its confidence in [0, 1]."""

import numpy as np
import triton_python_backend_utils as pb_utils

from str_ocr import greedy_decode_batch


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            try:
                readings = greedy_decode_batch(pb_utils.get_input_tensor_by_name(request, "LOGITS").as_numpy())
            except Exception as error:  # a malformed tensor fails its own request only
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error))))
                continue
            texts = np.array([[r.text.encode()] for r in readings], dtype=np.object_)
            confidences = np.array([[r.confidence] for r in readings], dtype=np.float32)
            outputs = [pb_utils.Tensor("TEXT", texts), pb_utils.Tensor("CONFIDENCE", confidences)]
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses
