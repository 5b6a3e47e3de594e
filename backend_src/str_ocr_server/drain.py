"""Draining before stopping: not ready first, then wait until nothing is in flight, then stop the server.

Once tritonserver begins to stop it refuses every new request, the inner steps of an ensemble request it
already accepted included, so those would fail. The launcher therefore stops the server only once nothing
is in flight, read from the server's metrics: no request waits in any model's queue
(``nv_inference_pending_request_count``) and none has completed (``nv_inference_request_success`` and
``_failure``) for ``quiet`` seconds, which covers requests being executed.
"""

from __future__ import annotations

import time
import urllib.error
from collections.abc import Callable

from str_ocr_client.stats import sample_total, scrape

PENDING = "nv_inference_pending_request_count"
COMPLETED = ("nv_inference_request_success", "nv_inference_request_failure")


def activity(metrics_url: str, **labels: str) -> tuple[float, float] | None:
    """(requests waiting, requests completed so far) over every model, or those whose samples carry ``labels``
    (``model="..."``); None when the metrics cannot be read."""
    try:
        text = scrape(metrics_url)
    except (urllib.error.URLError, OSError):
        return None
    return sample_total(text, PENDING, **labels), sum(sample_total(text, name, **labels) for name in COMPLETED)


def wait_until_idle(metrics_url: str, timeout: float, quiet: float = 1.0, poll: float = 0.05,
                    stopped: Callable[[], bool] = lambda: False, busy: Callable[[], bool] = lambda: False) -> bool:
    """True once nothing is in flight, in the server or (``busy``) in front of it; False at ``timeout`` (or when
    the metrics cannot be read)."""
    deadline = time.monotonic() + timeout
    last, quiet_since = None, time.monotonic()
    while time.monotonic() < deadline and not stopped():
        now = activity(metrics_url)
        if now is None:
            return False
        if now[0] > 0 or busy() or (last is not None and now[1] != last):
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet:
            return True
        last = now[1]
        time.sleep(poll)
    return False
