"""The gRPC proxy's screening of inference requests, and the calls it passes through."""

from __future__ import annotations

import pytest
from tritonclient.grpc import service_pb2

from str_ocr_server.compat.grpc_proxy import METHODS, infer_problem, parse_infer


def request(datatype: str, *shapes: list[int]) -> service_pb2.ModelInferRequest:
    return service_pb2.ModelInferRequest(model_name="m", inputs=[
        service_pb2.ModelInferRequest.InferInputTensor(name=f"in{i}", datatype=datatype, shape=shape)
        for i, shape in enumerate(shapes)])


@pytest.mark.parametrize("datatype,shape", [
    ("FP32", [1, 1, 32, 2**57 + 100]),  # 2^59 + 400 elements, 4 bytes each: the byte size wraps to 12,800
    ("UINT8", [8, 2**61 + 1]),          # the ensemble's IMAGE: 2^64 + 8 elements
    ("BYTES", [2**62, 4]),              # the count alone overflows
    ("FP32", [1, -1, 32, 100]),         # negative
    ("FP32", [1] * 65),                 # more dimensions than any model takes
])
def test_a_shape_the_server_would_mishandle_is_refused(datatype, shape):
    problem = infer_problem(request(datatype, [1, 32, 100], shape))
    assert problem and "'in1'" in problem


@pytest.mark.parametrize("datatype,shape", [("FP32", [1, 1, 32, 100]), ("UINT8", [1, 8 << 20]), ("FP32", [0, 2**62]),
                                            ("INT64", [2**59]), ("FP32", [])])
def test_a_shape_within_64_bits_passes_to_the_server(datatype, shape):
    # The server checks the data against the shape itself; the proxy only keeps its arithmetic from wrapping.
    assert infer_problem(request(datatype, shape)) is None


def test_a_message_that_is_no_inference_request_is_left_to_the_server_to_refuse():
    assert parse_infer(b"\xff\xff\xff") is None
    assert parse_infer(request("FP32", [1]).SerializeToString()).model_name == "m"


def test_every_method_of_the_inference_service_passes_through_with_its_kind_of_call():
    service = service_pb2.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    for method in service.methods:
        assert METHODS[f"/inference.GRPCInferenceService/{method.name}"] == (method.client_streaming,
                                                                             method.server_streaming)
    assert METHODS["/inference.GRPCInferenceService/ModelStreamInfer"] == (True, True)
