"""A deployment that keeps answering: locked-down admin APIs, overload, a crashed model process and shutdown
(input limits: ``test_input_limits``). Each runs against the local launcher and against the container image."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio
from tritonclient.utils import InferenceServerException

from str_ocr.contract import OCR
from str_ocr_client.http import ADMIN_HEADER, GRPC_ADMIN_HEADER, TritonHTTP
from str_ocr_client.requests import image_inputs, recognizer_inputs
from str_ocr_client.samples import generated_images
from str_ocr_client.stats import metric_total

from ..conftest import start_server
from ..helpers import (MODEL, Load, blockers_lasting, infer, send_timed_behind, tutorial_input,
                       watch_readiness)

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
    blockers = blockers_lasting(server, seconds=0.7)  # the queue fills behind them, well inside its 2 s
    start = time.monotonic()
    blocked, results = send_timed_behind(server, blockers, requests, concurrency=600)
    elapsed = time.monotonic() - start
    answered = [o.seconds for o in results if o.ok]
    refused = [(o.seconds, o.result) for o in results if not o.ok]
    assert len(answered) + len(refused) == len(requests)  # none lost
    assert all(o.ok for o in blocked), [str(o.result) for o in blocked if not o.ok]  # none refused: instances idle
    assert answered and refused, f"{len(answered)} answered, {len(refused)} refused"
    for _, error in refused:
        assert "UNAVAILABLE" in str(error) and ("Exceeds maximum queue size" in str(error) or
                                                "timeout" in str(error).lower())
    p95 = float(np.percentile(answered, 95))
    print(f"overload: {len(requests)} sent, {len(answered)} answered, {len(refused)} refused, none lost; "
          f"answered p95 {p95 * 1e3:.0f} ms, refused p95 {np.percentile([s for s, _ in refused], 95) * 1e3:.0f} ms, "
          f"all in {elapsed:.1f} s, behind {len(blockers)} batches {blockers[0].shape}")
    assert p95 < 2.0 + 3.0  # the queue timeout, plus the executions that were already running
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        assert client.is_server_ready() and infer(client, tutorial_input(1)).shape == (1, 26, 37)


# --- A crashed model process ----------------------------------------------------------------


def test_a_killed_stub_is_replaced_while_the_server_keeps_serving(server_kind):
    server = start_server(server_kind, None, ("text_recognition",), "crash", admin_key=KEY, watchdog=0.5,
                          exit_timeout=5)
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
        not_ready = [t for t, ok in readiness if t > killed_at and not ok]
        assert not_ready, "ready all through the outage"
        outage = max(not_ready) - killed_at
        recovered = [t for t, ok in outcomes if ok and t > killed_at + 1]
        print(f"crash: not ready for {outage:.1f} s after the kill; {len(failures)} requests failed, "
              f"{len(recovered)} succeeded after")
        # Both instances died at once: what they failed, the proxy sent again once the model served again.
        assert outage < 60 and len(recovered) > 20 and not failures
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
    # On a CPU slowed by other work, 16 clients can queue a request past the config's queue timeout: the server then
    # answers it UNAVAILABLE, as configured (a request cannot ask for longer). That answer is no loss; any other
    # failure is. A server that stalled at SIGTERM would shed every request, and answer none sent after it.
    print(f"drain ({model}): not ready {((not_ready or signalled) - signalled) * 1e3:.0f} ms after SIGTERM; "
          f"{len(load.outcomes)} requests, {len(load.lost())} lost, {len(during_drain)} sent after SIGTERM and "
          f"answered; exit {result.get('exit')}; shed by the queue timeout (sent, answered; s from SIGTERM): "
          f"{[o[:2] for o in seconds_from(signalled, load.shed())] or 'none'}")
    assert not_ready is not None and not_ready - signalled < 1.0, "the server stayed ready after SIGTERM"
    assert during_drain, "nothing sent after SIGTERM was answered: no drain"
    # Every request it accepted was answered: with its result, or the queue policy's refusal.
    assert not load.lost(), seconds_from(signalled, load.lost())[:3]
    assert result["exit"] == 0


def seconds_from(start: float, outcomes: list[tuple[float, float, str | None]]) -> list[tuple[float, float, str]]:
    """Each outcome's times of sending and answer, in seconds from ``start``, and its error."""
    return [(round(sent - start, 2), round(answered - start, 2), error or "") for sent, answered, error in outcomes]
