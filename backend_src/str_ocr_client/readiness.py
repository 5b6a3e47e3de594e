"""Waiting until a server, or one of its models, is ready."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import Enum

import tritonclient.grpc.aio as grpcaio


def wait_for(ready: Callable[[], bool], timeout: float, what: str, gone: Callable[[], str | None] = lambda: None,
             interval: float = 0.25) -> None:
    """Return once ``ready()``; raise ``RuntimeError`` when ``gone()`` gives a reason or after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not ready():
        if reason := gone():
            raise RuntimeError(f"{what}: {reason}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(interval)


class Readiness(Enum):
    READY = "ready"
    NO_MODEL = "the server is up but the model is not ready"
    UNREACHABLE = "the server does not answer"


async def model_readiness(client: grpcaio.InferenceServerClient, model: str, timeout: float) -> tuple[Readiness, str]:
    """Whether ``model`` became ready within ``timeout`` s, and the last reason it was not."""
    deadline = time.monotonic() + timeout
    state, reason = Readiness.UNREACHABLE, "no answer"
    while time.monotonic() < deadline:
        try:
            if await client.is_server_live():
                if await client.is_model_ready(model):
                    return Readiness.READY, ""
                state, reason = Readiness.NO_MODEL, f"model {model!r} is not ready"
        except Exception as error:  # noqa: BLE001 - an unreachable server looks different in every gRPC version
            state, reason = Readiness.UNREACHABLE, str(error).splitlines()[0]
        await asyncio.sleep(0.5)
    return state, reason
