"""A deployment that keeps answering: locked-down admin APIs, overload, a crashed model process,
shutdown, and input limits. Each runs against the local launcher and against the container image."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio
import tritonclient.http as httpclient
from tritonclient.grpc import service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

from str_ocr.contract import OCR
from str_ocr_client.http import ADMIN_HEADER, GRPC_ADMIN_HEADER
from str_ocr_client.http import TritonHTTP
from str_ocr_client.requests import image_inputs, recognizer_inputs, text_of
from str_ocr_client.samples import generated_images
from str_ocr_client.stats import metric_total

from ..conftest import start_server
from ..helpers import MODEL, Load, infer, send_timed, tutorial_input, watch_readiness

pytestmark = pytest.mark.integration
KEY = "a-key-for-these-tests"


def http_of(server, key: str | None = None) -> TritonHTTP:
    return TritonHTTP(server.http_url, key)


# --- The administrative APIs ------------------------------------------------------------------


def test_admin_apis_need_the_key_and_inference_does_not(serve):
    server = serve(None, ("text_recognition",), admin_key=KEY)
    anonymous, admin = http_of(server), http_of(server, KEY)
    status, body = anonymous.load("text_recognition")
    assert status == 403 and ADMIN_HEADER in str(body)
    assert anonymous.unload("text_recognition")[0] == 403
    assert anonymous.call("/repository/index", {})[0] == 403
    assert admin.call("/repository/index", {})[0] == 200
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        with pytest.raises(InferenceServerException, match="restricted"):
            client.get_inference_statistics(MODEL)
        with pytest.raises(InferenceServerException, match="restricted"):
            client.load_model(OCR)  # in the repository, not loaded: the key alone stops it
        assert client.get_inference_statistics(MODEL, headers={GRPC_ADMIN_HEADER: KEY}) is not None
        assert infer(client, tutorial_input(1)).shape == (1, 26, 37)  # inference needs no key
        assert client.is_server_ready()


# --- Overload ---------------------------------------------------------------------------------


def test_overload_is_refused_at_once_and_answered_requests_stay_fast(serve):
    server = serve(None)  # the recommended config: at most 128 queued requests, 2 s in the queue
    requests = [tutorial_input(2, seed=i) for i in range(1200)]
    start = time.monotonic()
    results = send_timed(server.grpc_url, requests, concurrency=600)
    elapsed = time.monotonic() - start
    answered = [o.seconds for o in results if o.ok]
    refused = [(o.seconds, o.result) for o in results if not o.ok]
    assert len(answered) + len(refused) == len(requests)  # none lost
    assert answered and refused, f"{len(answered)} answered, {len(refused)} refused"
    for _, error in refused:
        assert "UNAVAILABLE" in str(error) and ("Exceeds maximum queue size" in str(error) or "timeout" in str(error).lower())
    p95 = float(np.percentile(answered, 95))
    print(f"overload: {len(requests)} sent, {len(answered)} answered, {len(refused)} refused, none lost; "
          f"answered p95 {p95 * 1e3:.0f} ms, refused p95 {np.percentile([s for s, _ in refused], 95) * 1e3:.0f} ms, "
          f"all in {elapsed:.1f} s")
    assert p95 < 2.0 + 3.0  # the queue timeout, plus the executions that were already running
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        assert client.is_server_ready() and infer(client, tutorial_input(1)).shape == (1, 26, 37)


# --- A crashed model process ----------------------------------------------------------------


def test_a_killed_stub_is_replaced_while_the_server_keeps_serving(server_kind):
    server = start_server(server_kind, None, ("text_recognition",), "crash", admin_key=KEY, watchdog=0.5, exit_timeout=5)
    try:
        outcomes, readiness = [], []
        http = http_of(server)
        stop = threading.Event()

        def watch_readiness():
            while not stop.is_set():
                readiness.append((time.monotonic(), http.ready()))
                time.sleep(0.05)

        async def load():
            async with grpcaio.InferenceServerClient(server.grpc_url) as client:
                deadline = time.monotonic() + 90
                while time.monotonic() < deadline and not stop.is_set():
                    start = time.monotonic()
                    try:
                        await client.infer(MODEL, recognizer_inputs(tutorial_input(1)), client_timeout=30)
                        outcomes.append((start, True))
                    except Exception:  # noqa: BLE001 - counted
                        outcomes.append((start, False))
                    await asyncio.sleep(0.02)
                    recovered = [t for t, ok in outcomes if ok and killed_at and t > killed_at + 1]
                    if len(recovered) > 20:
                        return

        killed_at = None
        watcher = threading.Thread(target=watch_readiness, daemon=True)
        watcher.start()
        loader = threading.Thread(target=lambda: asyncio.run(load()), daemon=True)
        loader.start()
        time.sleep(2)
        killed_at = time.monotonic()
        assert server.kill_stubs(MODEL) == 2
        loader.join(120)
        stop.set()
        watcher.join(5)
        failures = [t for t, ok in outcomes if not ok]
        assert failures, "killing the stubs should fail some requests"
        outage = max(failures) - killed_at
        recovered = [t for t, ok in outcomes if ok and t > max(failures)]
        print(f"crash: {len(failures)} requests failed, the last {outage:.1f} s after the kill; {len(recovered)} succeeded after")
        assert outage < 60 and len(recovered) > 20
        assert not all(ok for t, ok in readiness if killed_at < t < max(failures) + 1), "ready all through the outage"
        assert http.ready()
        # The launcher's metrics count it, for the alert on recoveries.
        assert metric_total(server.launcher_metrics_url, "str_ocr_model_recoveries_total", model=MODEL) == 1
    finally:
        server.stop()


# --- Shutdown ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [MODEL, OCR])
def test_sigterm_drains_every_accepted_request_then_stops_with_status_zero(server_kind, model):
    server = start_server(server_kind, None, (model,), f"drain-{model}", exit_timeout=30)
    image = generated_images(1, seed=5, image_format="png")[0].data
    inputs = (lambda: recognizer_inputs(tutorial_input(2))) if model == MODEL else (lambda: image_inputs(image))
    load = Load(server.grpc_url, model, inputs, workers=16)
    load.thread.start()
    http, readiness, stop_watching = TritonHTTP(server.http_url), [], threading.Event()
    watcher = threading.Thread(target=watch_readiness, args=(http, stop_watching, readiness), daemon=True)
    watcher.start()
    deadline = time.monotonic() + 60
    while len(load.outcomes) < 50 and time.monotonic() < deadline:
        time.sleep(0.05)
    result: dict[str, object] = {"signalled": time.monotonic()}
    stopper = threading.Thread(target=lambda: result.update(exit=server.stop(timeout=90)))
    stopper.start()
    while not [t for t, ok in readiness if t > result["signalled"] and not ok] and stopper.is_alive():
        time.sleep(0.02)
    time.sleep(0.5)  # a load balancer takes a moment to stop sending once the server says not ready
    load.stopped.set()
    load.thread.join(90)
    stopper.join(120)
    stop_watching.set()
    signalled = result["signalled"]
    not_ready = min((t for t, ok in readiness if t > signalled and not ok), default=None)
    during_drain = [o for o in load.outcomes if o[0] > signalled and o[2] is None]
    print(f"drain ({model}): not ready {((not_ready or signalled) - signalled) * 1e3:.0f} ms after SIGTERM; "
          f"{len(load.outcomes)} requests, {len(load.failures())} failed, {len(during_drain)} sent after SIGTERM and "
          f"answered; exit {result.get('exit')}")
    assert not_ready is not None and not_ready - signalled < 1.0, "the server stayed ready after SIGTERM"
    assert during_drain, "nothing sent after SIGTERM was answered: no drain"
    assert not load.failures(), load.failures()[:3]  # every request it accepted was answered
    assert result["exit"] == 0


# --- Input limits -----------------------------------------------------------------------------


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
    assert http_of(server).ready()


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
