"""Many requests in flight at once over asyncio gRPC, with one outcome per request, none lost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import tritonclient.grpc.aio as grpcaio
from tritonclient.grpc import InferInput, InferResult

from str_ocr.contract import RECOGNIZER
from str_ocr.preprocess import normalize
from str_ocr.text import Reading, greedy_decode

from .requests import logits_of, recognizer_inputs

DEFAULT_TIMEOUT = 120.0
"""Seconds a request may take: one the server never answers fails instead of hanging its caller."""


@dataclass(frozen=True)
class Outcome:
    """What became of one request: its result or its error, when it was sent and how long it took."""

    start: float
    """``time.monotonic()`` when it was sent."""
    seconds: float
    result: InferResult | Exception

    @property
    def ok(self) -> bool:
        return not isinstance(self.result, Exception)


async def infer_each(
    url: str,
    model: str,
    requests: Sequence[list[InferInput]],
    concurrency: int = 16,
    timeout: float = DEFAULT_TIMEOUT,
    on_outcome: Callable[[int, Outcome], None] | None = None,
) -> list[Outcome]:
    """Send every request (a list of inputs each) with at most ``concurrency`` in flight, in order of the list."""
    limit = asyncio.Semaphore(concurrency)
    async with grpcaio.InferenceServerClient(url) as client:

        async def one(index: int, inputs: list[InferInput]) -> Outcome:
            async with limit:
                start = time.monotonic()
                try:
                    result: InferResult | Exception = await client.infer(model, inputs, client_timeout=timeout)
                except Exception as error:  # noqa: BLE001 - every failure is this request's outcome
                    result = error
                outcome = Outcome(start, time.monotonic() - start, result)
            if on_outcome:
                on_outcome(index, outcome)
            return outcome

        return await asyncio.gather(*(one(i, inputs) for i, inputs in enumerate(requests)))


def infer_each_now(url: str, model: str, requests: Sequence[list[InferInput]], concurrency: int = 16,
                   timeout: float = DEFAULT_TIMEOUT) -> list[Outcome]:
    """``infer_each`` from synchronous code."""
    return asyncio.run(infer_each(url, model, requests, concurrency, timeout))


def read_lines(url: str, lines: Sequence[np.ndarray], model: str = RECOGNIZER, concurrency: int = 16) -> list[Reading]:
    """What the served recogniser reads in grey ``[32, W]`` uint8 lines, each sent as its own request."""
    requests = [recognizer_inputs(normalize(line)[np.newaxis, np.newaxis]) for line in lines]
    outcomes = infer_each_now(url, model, requests, concurrency)
    if failed := [o.result for o in outcomes if not o.ok]:
        raise RuntimeError(f"{len(failed)} of {len(lines)} lines failed, the first: {failed[0]}")
    return [greedy_decode(logits_of(o.result)[0]) for o in outcomes]
