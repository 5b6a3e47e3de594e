"""Requests and statistics for the integration tests."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio
from tritonclient.utils import np_to_triton_dtype

from str_ocr import INPUT_NAME, OUTPUT_NAME

MODEL = "text_recognition"
CLIENT_TIMEOUT = 120  # seconds: a request the server never answers fails its test instead of hanging it


def tutorial_input(batch: int = 2, width: int = 100, seed: int = 0, dtype=np.float32) -> np.ndarray:
    """The tutorial's request: ``[batch, 1, 32, width]`` values in [-1, 1]."""
    return np.random.default_rng(seed).uniform(-1, 1, (batch, 1, 32, width)).astype(dtype)


def infer_input(array: np.ndarray, module=grpcclient, datatype: str | None = None):
    tensor = module.InferInput(INPUT_NAME, list(array.shape), datatype or np_to_triton_dtype(array.dtype))
    tensor.set_data_from_numpy(array)
    return tensor


def infer(client: grpcclient.InferenceServerClient, array: np.ndarray, model: str = MODEL) -> np.ndarray:
    return client.infer(model, [infer_input(array)], client_timeout=CLIENT_TIMEOUT).as_numpy(OUTPUT_NAME)


def batch_stats(client: grpcclient.InferenceServerClient, model: str = MODEL) -> tuple[int, int]:
    """(inference_count, execution_count) of ``model`` so far."""
    stats = client.get_inference_statistics(model, as_json=True)["model_stats"][0]
    return int(stats.get("inference_count", 0)), int(stats.get("execution_count", 0))


def stats_after(
    client: grpcclient.InferenceServerClient, before: tuple[int, int], inferences: int, model: str = MODEL, timeout: float = 10
) -> tuple[int, int]:
    """The (inferences, executions) added since ``before``, once ``inferences`` are counted.

    Triton updates a model's statistics when an execution has finished, which can be just after
    its responses reached the client.
    """
    deadline = time.monotonic() + timeout
    while True:
        now = batch_stats(client, model)
        added = now[0] - before[0], now[1] - before[1]
        if added[0] >= inferences or time.monotonic() > deadline:
            return added
        time.sleep(0.05)


async def _timed(url: str, arrays: list[np.ndarray], concurrency: int, model: str) -> list[tuple[float, float, object]]:
    """Send ``arrays`` with at most ``concurrency`` in flight: (start, seconds, logits or the exception) each."""
    limit = asyncio.Semaphore(concurrency)
    async with grpcaio.InferenceServerClient(url) as client:

        async def one(array: np.ndarray) -> tuple[float, float, object]:
            async with limit:
                start = time.monotonic()
                try:
                    result = await client.infer(model, [infer_input(array, grpcaio)], client_timeout=CLIENT_TIMEOUT)
                    outcome = result.as_numpy(OUTPUT_NAME)
                except Exception as error:  # noqa: BLE001 - the caller inspects it
                    outcome = error
                return start, time.monotonic() - start, outcome

        return await asyncio.gather(*(one(a) for a in arrays))


async def _concurrent(url: str, arrays: list[np.ndarray], concurrency: int, model: str) -> list[object]:
    return [outcome for _, _, outcome in await _timed(url, arrays, concurrency, model)]


def send_timed(url: str, arrays: list[np.ndarray], concurrency: int, model: str = MODEL) -> list[tuple[float, float, object]]:
    """(start, seconds, logits or exception) per request, ``concurrency`` in flight."""
    return asyncio.run(_timed(url, arrays, concurrency, model))


def send_concurrently(url: str, arrays: list[np.ndarray], concurrency: int = 16, model: str = MODEL) -> list[object]:
    return asyncio.run(_concurrent(url, arrays, concurrency, model))


def busy_instance_blocker(batch: int = 16, width: int = 2048) -> np.ndarray:
    """A full batch of the widest lines: it always runs alone, and keeps an instance busy for a while."""
    return np.zeros((batch, 1, 32, width), np.float32)


async def _behind(url: str, blocker: np.ndarray, arrays: list[np.ndarray], head_start: float, model: str):
    first = asyncio.create_task(_concurrent(url, [blocker], 1, model))
    await asyncio.sleep(head_start)
    rest = await _concurrent(url, arrays, len(arrays), model)
    return (await first)[0], rest


def send_behind_a_busy_instance(
    url: str, arrays: list[np.ndarray], blocker: np.ndarray, head_start: float = 0.05, model: str = MODEL
) -> tuple[object, list[object]]:
    """Send ``blocker``, then, while the instance works on it, all of ``arrays`` at once.

    The dynamic batcher only forms batches out of requests that wait in its queue. With a fast
    model and a client sharing the machine's cores, requests sent at a modest concurrency may each
    find the instance idle and run alone; queueing them behind one slow request makes the batches
    the test is about, however fast or slow the machine. Returns (blocker's result, results).
    """
    return asyncio.run(_behind(url, blocker, arrays, head_start, model))
