"""What the HTTP proxy refuses before the server sees it, and what it lets through."""

from __future__ import annotations

import json

import pytest

from str_ocr_server.compat.http_proxy import Refused, check_body, header_part, leaves

INFER = "/v2/models/text_recognition/infer"


def request(**tensor: object) -> bytes:
    base = {"name": "input.1", "shape": [1, 1, 32, 4], "datatype": "FP32", "data": [0.0] * 128}
    return json.dumps({"inputs": [base | tensor]}).encode()


@pytest.mark.parametrize("path", [INFER, "/v2/models/ocr/versions/1/infer"])
def test_a_valid_request_passes(path: str):
    check_body("POST", path, request(), None)
    check_body("POST", path, request(data=[[[[0.0] * 4] * 32]]), None)  # nested as the shape: the same 128
    check_body("POST", path, json.dumps({"inputs": [{"name": "IMAGE", "shape": [1, 1], "datatype": "BYTES",
                                                      "parameters": {"binary_data_size": 12}}],
                                         "outputs": [{"name": "TEXT", "parameters": {"binary_data": True}}]}).encode(),
               None)


@pytest.mark.parametrize("body, message", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nests JSON deeper"),
    (b"[]", "must be a JSON object"),
    (b'{"inputs": 5}', "needs 'inputs', a non-empty list"),
    (b'{"inputs": []}', "needs 'inputs', a non-empty list"),
    (b'{"inputs": [7]}', "input 0 must be a JSON object"),
    (request(name=None), "input 0 needs a 'name'"),
    (request(datatype="FLOAT"), "needs a 'datatype'"),
    (request(shape="1x32"), "needs a 'shape'"),
    (request(shape=[1, -1, 32, 4]), "needs a 'shape'"),
    (request(shape=[1, True, 32, 4]), "needs a 'shape'"),
    (request(shape=[1, 1.0, 32, 4]), "needs a 'shape'"),
    (request(data=[0.0]), "its 'data' holds 1"),
    (request(parameters=[]), "'parameters' of input 'input.1' must be a JSON object"),
    (json.dumps({"inputs": json.loads(request())["inputs"], "outputs": [{}]}).encode(), "output 0 needs a 'name'"),
    (json.dumps({"id": 5, "inputs": json.loads(request())["inputs"]}).encode(), "'id'"),
])
def test_a_malformed_inference_request_is_a_400(body: bytes, message: str):
    with pytest.raises(Refused, match=message) as refused:
        check_body("POST", INFER, body, None)
    assert refused.value.status == 400


@pytest.mark.parametrize("shape, datatype", [
    ([1, 1, 32, 2**57 + 100], "FP32"),  # 2**64 + 12,800 bytes: wraps around to the 12,800 sent
    ([8, 2**61 + 1], "BYTES"),  # 2**64 + 8 elements: wraps around to 8
    ([2**63], "UINT8"),
])
def test_a_shape_whose_size_overflows_64_bits_is_a_400(shape: list[int], datatype: str):
    header = json.dumps({"inputs": [{"name": "x", "shape": shape, "datatype": datatype,
                                     "parameters": {"binary_data_size": 12_800}}]}).encode()
    with pytest.raises(Refused, match="64-bit"):
        check_body("POST", INFER, header + bytes(12_800), str(len(header)))


def test_the_binary_header_length_must_lie_inside_the_body():
    assert header_part(b'{"a": 1}xyz', "8") == b'{"a": 1}'
    for length in ["0", "12", "-1", "abc", ""]:
        with pytest.raises(Refused, match="Inference-Header-Content-Length"):
            header_part(b'{"a": 1}xyz', length)


def test_other_endpoints_need_a_json_object_when_they_have_a_body():
    check_body("POST", "/v2/repository/index", b"", None)
    check_body("POST", "/v2/repository/models/ocr/load", b'{"parameters": {}}', None)
    check_body("GET", "/v2/health/ready", b"anything", None)
    with pytest.raises(Refused, match="not valid JSON"):
        check_body("POST", "/v2/repository/index", b"{bad", None)


def test_data_is_counted_however_it_nests():
    assert leaves([[1, 2], [3, [4, 5]]]) == 5 and leaves([]) == 0 and leaves(["a", "b"]) == 2


@pytest.mark.parametrize("body, message", [
    # The server reads the first of repeated keys, json the last: the overflowing shape must not hide behind another.
    (b'{"inputs": [{"name": "input.1", "datatype": "FP32", "shape": [1, 1, 32, 144115188075856028], '
     b'"shape": [1, 1, 32, 100], "parameters": {"binary_data_size": 12800}}]}', "repeats a JSON key"),
    (b'{"inputs": [{"name": "x", "datatype": ["FP32"], "shape": [1]}]}', "needs a 'datatype'"),
    (b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [' + b"2, " * 20_000 + b'2]}]}', "at most 64"),
    (b'{"inputs": [{"name": "x", "datatype": "FP32", "shape": [0, 9223372036854775808]}]}', "64-bit integers"),
    (b'{"n": ' + b"9" * 5000 + b'}', "not valid JSON"),
])
def test_requests_built_to_confuse_or_stall_the_check_are_400s(body: bytes, message: str):
    with pytest.raises(Refused, match=message) as refused:
        check_body("POST", INFER, body, None)
    assert refused.value.status == 400


def test_a_header_length_that_is_not_plain_digits_is_a_400():
    for length in ["\u00b2", "9" * 5000]:
        with pytest.raises(Refused, match="Inference-Header-Content-Length"):
            header_part(b'{"a": 1}', length)
