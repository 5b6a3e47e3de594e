"""Input limits: oversized and malformed requests, and overflowing shapes, refused before any model sees them,
over HTTP and gRPC. Each runs against the local launcher and against the container image."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.grpc import service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

from str_ocr.contract import OCR
from str_ocr_client.http import TritonHTTP
from str_ocr_client.requests import image_inputs, recognizer_inputs, text_of
from str_ocr_client.samples import generated_images
from str_ocr_client.stats import metric_total

from ..helpers import MODEL

pytestmark = pytest.mark.integration


def test_oversized_and_malformed_requests_are_refused_before_any_work(serve):
    server = serve(None, (OCR,))
    columns = lambda: metric_total(server.metrics_url, "str_ocr_columns_total")  # noqa: E731
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = columns()
        for width, message in [(2049, "2049 pixels wide"), (3, "3 pixels wide")]:
            with pytest.raises(InferenceServerException, match=message):
                client.infer(MODEL, recognizer_inputs(np.zeros((1, 1, 32, width), np.float32)))
        assert columns() == before  # refused before the network ran

        with pytest.raises(InferenceServerException, match="bytes; the limit is 8,388,608"):
            client.infer(OCR, image_inputs(b"\x89PNG" + bytes(8 * 1024 * 1024)))
        with pytest.raises(InferenceServerException, match="not an image file"):
            client.infer(OCR, image_inputs(b"\x00\x01\x02"))
        good = generated_images(3, seed=5, image_format="png")
        texts = [text_of(client.infer(OCR, image_inputs(g.data)))[0] for g in good]
        assert sum(t == g.truth for t, g in zip(texts, good)) >= 2
        assert client.is_server_ready()


def post(server, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    connection = http.client.HTTPConnection(server.http_url, timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read().decode(errors="replace")
    finally:
        connection.close()


def test_http_mistakes_are_400s_and_overflowing_shapes_never_reach_the_model(serve):
    server = serve(None, (OCR,))
    stubs = sorted(server.stub_pids(MODEL))
    infer_path = f"/v2/models/{MODEL}/infer"
    header = json.dumps({"inputs": [{"name": "input.1", "shape": [1, 1, 32, 2**57 + 100], "datatype": "FP32",
                                     "parameters": {"binary_data_size": 12_800}}]}).encode()
    for body, headers, message in [
        (b"{not json", {}, "not valid JSON"),
        (b'{"inputs": 5}', {}, "'inputs', a non-empty list"),
        (json.dumps({"inputs": [{"name": "input.1", "shape": [1, 1, 32, 100], "datatype": "FP32",
                                 "data": [0.0]}]}).encode(), {}, "its 'data' holds 1"),
        (header + bytes(12_800), {"Inference-Header-Content-Length": str(len(header))}, "64-bit size"),
    ]:
        status, text = post(server, infer_path, body, headers)
        assert (status, message in text) == (400, True), text
    assert post(server, "/v2/repository/index", b"{bad", {})[0] == 400
    # The overflow reached no stub: the same processes serve, and read a line.
    assert sorted(server.stub_pids(MODEL)) == stubs
    with httpclient.InferenceServerClient(server.http_url) as client:
        good = generated_images(1, seed=9, image_format="png")[0]
        pixels = np.frombuffer(good.data, dtype=np.uint8)[np.newaxis]
        image = httpclient.InferInput("IMAGE", list(pixels.shape), "UINT8")
        image.set_data_from_numpy(pixels)
        answer = client.infer(OCR, [image])
        assert answer.as_numpy("TEXT").reshape(-1)[0].decode() == good.truth
        assert client.is_server_ready()


def launcher_peak_kib(server) -> int:
    """The launcher's peak resident memory (in the container, it is process 1)."""
    if hasattr(server, "container"):
        status = server.container.exec(["cat", "/proc/1/status"]).output.decode()
    else:
        status = Path(f"/proc/{server.process.pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))


def test_an_http_body_over_the_bound_is_refused_without_being_read_whole(serve):
    server = serve(None, (OCR,))
    infer_path = f"/v2/models/{MODEL}/infer"
    # Declared larger than the bound: refused from the headers alone, the body never sent.
    connection = http.client.HTTPConnection(server.http_url, timeout=30)
    connection.putrequest("POST", infer_path)
    connection.putheader("Content-Length", str(1 << 30))
    connection.endheaders()
    answer = connection.getresponse()
    assert answer.status == 413 and "--http-max-body-bytes" in answer.read().decode()
    connection.close()
    # Chunked, no length: refused once it grows past the bound; what follows is discarded, never held.
    peak = launcher_peak_kib(server)
    connection = http.client.HTTPConnection(server.http_url, timeout=60)
    try:
        connection.request("POST", infer_path, body=(bytes(1 << 20) for _ in range(64)), encode_chunked=True)
        status = connection.getresponse().status
    except (BrokenPipeError, ConnectionResetError):  # it answered and closed while the rest was on its way
        status = 413
    finally:
        connection.close()
    grown = launcher_peak_kib(server) - peak
    assert status == 413 and grown < 32 * 1024, f"status {status}; the launcher's peak memory grew {grown:,} KiB"
    assert TritonHTTP(server.http_url).ready()


def raw_request(model: str, name: str, datatype: str, shape: list[int], data: bytes, request_id: str = ""):
    """An inference request as a client may send it: any declared shape, whatever data."""
    return service_pb2.ModelInferRequest(model_name=model, id=request_id, raw_input_contents=[data], inputs=[
        service_pb2.ModelInferRequest.InferInputTensor(name=name, datatype=datatype, shape=shape)])


def test_grpc_overflowing_shapes_never_reach_a_model_and_their_stream_mates_are_answered(serve):
    server = serve(None, (OCR,))
    stubs = {m: sorted(server.stub_pids(m)) for m in (MODEL, "ocr_preprocess")}
    line = np.random.default_rng(3).random((1, 1, 32, 100), dtype=np.float32)
    good = raw_request(MODEL, "input.1", "FP32", [1, 1, 32, 100], line.tobytes(), "good")
    overflows = [raw_request(MODEL, "input.1", "FP32", [1, 1, 32, 2**57 + 100], bytes(12_800), "overflow"),
                 raw_request(OCR, "IMAGE", "UINT8", [8, 2**61 + 1], bytes(8), "overflow")]
    with grpc.insecure_channel(server.grpc_url) as channel:
        service = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        for request in overflows:
            with pytest.raises(grpc.RpcError) as refused:
                service.ModelInfer(request, timeout=30)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "64-bit size" in refused.value.details()
        # In a stream, the refused request gets its error response and the others their answers.
        answers = list(service.ModelStreamInfer(iter([good, overflows[0], good]), timeout=60))
        assert sorted((a.infer_response.id, bool(a.error_message)) for a in answers) == [
            ("good", False), ("good", False), ("overflow", True)], [a.error_message for a in answers]
        # Over the message bound: refused by the proxy before it is read whole.
        with pytest.raises(grpc.RpcError) as refused:
            service.ModelInfer(raw_request(OCR, "IMAGE", "UINT8", [1, 17 << 20], bytes(17 << 20)), timeout=60)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert {m: sorted(server.stub_pids(m)) for m in stubs} == stubs, "an overflow reached a stub and killed it"
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        image = generated_images(1, seed=9, image_format="png")[0]
        assert text_of(client.infer(OCR, image_inputs(image.data)))[0] == image.truth
        assert client.is_server_ready()
