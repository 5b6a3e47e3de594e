"""tritonserver itself killed under load, as 2.51's own abort (SIGABRT) or an out-of-memory kill (SIGKILL) would:
the launcher starts it again behind the same ports, answering "unavailable" meanwhile, locally and in the image."""

from __future__ import annotations

import signal
import time

import pytest
from str_ocr.contract import OCR, POSTPROCESS, PREPROCESS, RECOGNIZER, SECOND_RECOGNIZER
from str_ocr_client.http import TritonHTTP
from str_ocr_client.requests import image_inputs
from str_ocr_client.samples import generated_images
from str_ocr_client.stats import metric_total

from ..conftest import start_server
from ..helpers import Load

pytestmark = pytest.mark.integration
KEY = "a-key-for-these-tests"
SIGNALS = (signal.SIGKILL, signal.SIGABRT)
PYTHON_MODELS = (PREPROCESS, RECOGNIZER, POSTPROCESS, SECOND_RECOGNIZER)


def crash_once(server, signum: int, load: Load) -> dict:
    """Kill tritonserver with ``signum`` under ``load``; the seconds to serving again and the requests that failed."""
    http = TritonHTTP(server.http_url)
    sent_before = len(load.outcomes)
    stubs = [pid for model in PYTHON_MODELS for pid in server.stub_pids(model)]
    killed = time.monotonic()
    server.signal_server(signum)
    while http.ready():  # the death is seen at once: the proxy answers 503 while nothing is behind it
        assert time.monotonic() < killed + 10, "still ready 10 s after tritonserver was killed"
        time.sleep(0.05)
    while not http.ready():
        assert time.monotonic() < killed + 180, f"not serving again within 180 s\n{server.log_tail()}"
        time.sleep(0.1)
    back = time.monotonic()
    time.sleep(2)
    during = load.outcomes[sent_before:]
    return {"signal": signal.Signals(signum).name, "seconds": back - killed, "requests": len(during),
            "failed": [o for o in during if o[2] is not None], "after": [o for o in during if o[0] > back and o[2]],
            "stubs": stubs, "outlived": server.living(stubs)}


@pytest.fixture(scope="module")
def crashes(server_kind) -> dict:
    server = start_server(server_kind, None, (OCR,), "server-crash", admin_key=KEY)
    try:
        (image,) = generated_images(1, seed=7, image_format="png")
        load = Load(server.grpc_url, OCR, lambda: image_inputs(image.data), workers=4, pause_after_error=0.05)
        load.thread.start()
        time.sleep(2)
        results = [crash_once(server, signum, load) for signum in SIGNALS]
        load.stopped.set()
        load.thread.join(90)
        restarts = metric_total(server.launcher_metrics_url, "str_ocr_server_restarts_total")
        for r in results:
            print(f"{server_kind}: tritonserver killed with {r['signal']} under ocr load: serving again after "
                  f"{r['seconds']:.1f} s; {len(r['failed'])} of {r['requests']} requests sent meanwhile failed "
                  f"('unavailable'), {len(r['after'])} after it was ready again")
        log = server.log_tail()
        return {"results": results, "restarts": restarts, "exit": server.stop(), "log": log}
    finally:
        server.stop()


def test_a_killed_server_serves_again_behind_the_same_ports(crashes):
    assert crashes["restarts"] == len(SIGNALS), (crashes["restarts"], crashes["log"][-4000:])
    for result in crashes["results"]:
        assert not result["after"], result["after"][:3]


def test_no_stub_of_a_killed_server_outlives_it(crashes):
    # A stub executing a request when its server dies deadlocks instead of exiting (compat.stubs.kill_session).
    for result in crashes["results"]:
        assert result["stubs"], "no stub was running to watch"
        assert not result["outlived"], (result["signal"], result["outlived"], crashes["log"][-4000:])


def test_requests_refused_while_it_restarts_say_unavailable(crashes):
    errors = [o[2] for r in crashes["results"] for o in r["failed"]]
    assert all("UNAVAILABLE" in e or "unavailable" in e.lower() or "not serving" in e for e in errors), errors[:3]


def test_after_restarts_the_launcher_still_stops_cleanly(crashes):
    assert crashes["exit"] == 0, (crashes["exit"], crashes["log"][-4000:])
