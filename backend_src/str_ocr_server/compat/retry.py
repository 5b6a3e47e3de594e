"""Sending again an inference request that a dead stub's instance failed, once the model serves again.

Server 2.51 keeps handing requests to an instance whose stub died until ``stub_recovery`` has swapped a new version
in, so requests sent in that moment fail, even after readiness has said "not ready". Inference is idempotent: the
proxies hold such a request until the server serves again and send it anew, within the client's deadline and at
most ``RETRY_WINDOW`` seconds after it came. No upstream fix yet (server#8604).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

DEAD_INSTANCE = re.compile(r"Stub process '[^']+' is not healthy")
"""What the Python backend says of a request its instance could not run because the stub died (with an internal
error: a client's own words in a 4xx error, a model named so, say, never match)."""
RETRY_WINDOW = 30.0
"""Seconds after it came that a request may still be sent again."""
FIRST_PAUSE, LONGEST_PAUSE = 0.05, 1.0

Answer = TypeVar("Answer")


def from_dead_instance(message: str) -> bool:
    return DEAD_INSTANCE.search(message) is not None


async def until_set(event: threading.Event, deadline: float, stopping: threading.Event) -> bool:
    """Wait without blocking the loop until ``event`` is set (True), or ``deadline`` (monotonic) passes or
    ``stopping`` is set (False)."""
    while not event.is_set():
        if time.monotonic() >= deadline or stopping.is_set():
            return False
        await asyncio.sleep(0.02)
    return True


async def send_until_served(send: Callable[[], Awaitable[Answer]], failed_on_dead_instance: Callable[[Answer], bool],
                            serving: threading.Event, stopping: threading.Event, deadline: float) -> Answer:
    """``send()``; while its answer says a dead instance failed it, wait until ``serving`` and send again, until
    ``deadline`` or until the launcher is ``stopping``. The last answer is the request's."""
    pause = FIRST_PAUSE
    while True:
        answer = await send()
        if not failed_on_dead_instance(answer) or time.monotonic() + pause >= deadline or stopping.is_set():
            return answer
        # The death may not be seen yet (serving still set): pause before each try.
        await asyncio.sleep(pause)
        pause = min(2 * pause, LONGEST_PAUSE)
        if not await until_set(serving, deadline, stopping):
            return answer
