"""The integration tests' requests, as a thin layer over the client library (``str_ocr_client``)."""

from __future__ import annotations

import asyncio
import functools
import math
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio

from str_ocr.contract import MAX_WIDTH, RECOGNIZER
from str_ocr.engines import Engine
from str_ocr.serving import ServingSettings
from str_ocr.settings import line_limits, model_parameters
from str_ocr_client.http import GRPC_ADMIN_HEADER
from str_ocr_client.http import TritonHTTP
from str_ocr_client.requests import logits_of, random_lines, recognizer_inputs
from str_ocr_client.sending import DEFAULT_TIMEOUT, Outcome, infer_each, infer_each_now
from str_ocr_client.readiness import wait_for
from str_ocr_server.compat.stub_recovery import served_instances
from str_ocr_server.drain import activity, wait_until_idle
from str_ocr_triton.config import default_repository
from tests.unit.str_ocr.test_ragged import logit_tolerance

if TYPE_CHECKING:
    from str_ocr_server.process import ServerProcess

    from .containers import ContainerServer

    Server = ServerProcess | ContainerServer
    """A started server of either kind (``conftest.start_server``)."""

MODEL = RECOGNIZER
tutorial_input = random_lines
PERF_ANALYZER = Path(sys.prefix, "bin", "perf_analyzer")
UNSTABLE_EXIT = 2
"""perf_analyzer's exit status when no level's measurement windows agreed within its stability band; where an
earlier level of a range did, it reports the levels before the unstable one and exits 0."""
UNSTABLE_MESSAGE = "Failed to obtain stable measurement"
QUEUE_TIMEOUT = "Request timeout expired"
"""Triton's answer (UNAVAILABLE) to a request that waited in a model's queue past its queue policy's timeout."""
REQUEST_ERRORS = ("had error", "Failed to retrieve results from inference request",
                  "Failed to maintain requested inference load")
"""What perf_analyzer prints when a request it sent failed."""


def admin_headers(server: Server) -> dict[str, str] | None:
    """What a gRPC call to the server's administrative APIs (model configs, statistics) sends: its key, if any."""
    return {GRPC_ADMIN_HEADER: server.admin_key} if server.admin_key else None


def served_config(server: Server, model: str = MODEL) -> dict:
    """The config ``model`` is served with, as JSON."""
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        return client.get_model_config(model, headers=admin_headers(server), as_json=True)["config"]


def _settings_and_device(config: dict) -> tuple[ServingSettings, torch.device]:
    settings = ServingSettings.from_parameters(model_parameters(config), default_repository() / config["name"] / "1")
    on_gpu = any(group["kind"] == "KIND_GPU" for group in config["instance_group"])
    return settings, torch.device("cuda" if on_gpu else "cpu")


def in_process_engine(config: dict) -> Engine:
    """The engine an instance of the recogniser's ``config`` runs (engine, precision, weights, device kind), built
    here: the reference its served logits must equal."""
    settings, device = _settings_and_device(config)
    return settings.engine_on(device, threads=1)


def served_logit_tolerance(config: dict) -> float:
    """How far logits an instance of the recogniser's ``config`` computes may lie from the same line's computed
    otherwise (alone, in-process): ``logit_tolerance`` of its device kind and of the precision its engine runs in."""
    settings, device = _settings_and_device(config)
    return logit_tolerance(device.type, settings.engine_and_precision(device)[1])


def infer(client: grpcclient.InferenceServerClient, array: np.ndarray, model: str = MODEL) -> np.ndarray:
    return logits_of(client.infer(model, recognizer_inputs(array), client_timeout=DEFAULT_TIMEOUT))


def logits_or_error(outcome: Outcome) -> np.ndarray | Exception:
    return logits_of(outcome.result) if outcome.ok else outcome.result


def send_timed(url: str, arrays: list[np.ndarray], concurrency: int, model: str = MODEL) -> list[Outcome]:
    """Every array as its own request, ``concurrency`` in flight."""
    return infer_each_now(url, model, [recognizer_inputs(a) for a in arrays], concurrency)


def send_concurrently(url: str, arrays: list[np.ndarray], concurrency: int = 16, model: str = MODEL) -> list[object]:
    """Logits, or the error, of each array sent as its own request."""
    return [logits_or_error(o) for o in send_timed(url, arrays, concurrency, model)]


def busy_instance_blocker(batch: int = 16, width: int = MAX_WIDTH) -> np.ndarray:
    """``batch`` blank lines ``width`` wide (the widest a recogniser accepts unless told): sent as one request, they
    keep an instance busy for a while."""
    return np.zeros((batch, 1, 32, width), np.float32)


async def _behind(url: str, blockers: list[np.ndarray], arrays: list[np.ndarray],
                  arrived: Callable[[], Awaitable[None]], model: str,
                  concurrency: int) -> tuple[list[Outcome], list[Outcome]]:
    """Sends ``blockers`` at once, then ``arrays`` once ``arrived()`` has returned."""
    blocking, requests = [recognizer_inputs(b) for b in blockers], [recognizer_inputs(a) for a in arrays]
    first = asyncio.create_task(infer_each(url, model, blocking, len(blocking)))
    await arrived()
    rest = await infer_each(url, model, requests, concurrency)
    return await first, rest


def _until_blockers_arrived(metrics_url: str, model: str, blockers: int, waiting: int, completed_before: float,
                            timeout: float = 30.0) -> None:
    """Return once every blocker has reached the server, as its metrics for ``model`` show: while a request waits in
    the queue (so that no instance is idle), ``waiting`` blockers wait there or have completed; or all have completed.

    Wide blockers take a few hundred milliseconds to reach a loaded server; requests sent before them
    would fill the queue first and have them refused.
    """
    def arrived() -> bool:
        pending, completed = activity(metrics_url, model=model) or (0.0, completed_before)
        done = completed - completed_before
        return done >= blockers or (pending > 0 and pending + done >= waiting)

    wait_for(arrived, timeout, f"the blockers reaching the queue of {model}", interval=0.01)


def send_behind_a_busy_instance(
    url: str, arrays: list[np.ndarray], blocker: np.ndarray, head_start: float = 0.05, model: str = MODEL
) -> tuple[object, list[object]]:
    """Send ``blocker``, then, while the instance works on it, all of ``arrays`` at once.

    The dynamic batcher only forms batches out of requests that wait in its queue. With a fast
    model and a client sharing the machine's cores, requests sent at a modest concurrency may each
    find the instance idle and run alone; queueing them behind one slow request makes the batches
    the test is about, however fast or slow the machine. Returns (blocker's result, results).
    """
    head_start_passed = functools.partial(asyncio.sleep, head_start)
    blocked, rest = asyncio.run(_behind(url, [blocker], arrays, head_start_passed, model, len(arrays)))
    return logits_or_error(blocked[0]), [logits_or_error(o) for o in rest]


def blockers_lasting(server: Server, seconds: float, model: str = MODEL) -> list[np.ndarray]:
    """Full batches of lines that keep every instance of ``model`` busy about ``seconds``: as wide as that takes,
    and at least two an instance, so that some wait in the queue, where ``send_timed_behind`` sees them arrive.

    How long a batch keeps an instance busy differs severalfold between machines and with what else
    runs (a GPU reads the widest in milliseconds), so it is timed here, at a probe width.
    """
    config = served_config(server, model)
    instances, max_width = served_instances(config), line_limits(model_parameters(config)).max_width
    probe = min(512, max_width)

    def batches(width: int, each: int = 1) -> list[np.ndarray]:
        return [busy_instance_blocker(config["max_batch_size"], width)] * (instances * each)

    def busy_for(width: int) -> float:
        outcomes = infer_each_now(server.grpc_url, model, [recognizer_inputs(b) for b in batches(width)], instances)
        assert all(o.ok for o in outcomes), [o.result for o in outcomes if not o.ok]
        return max(max(o.seconds for o in outcomes), 1e-3)

    busy_for(probe)  # the first executions also warm the instances up
    columns = probe * seconds / busy_for(probe)  # an instance's batches' width in all
    each = max(2, math.ceil(columns / max_width))
    return batches(int(np.clip(columns / each, 32, max_width)), each)


def send_timed_behind(
    server: Server, blockers: list[np.ndarray], arrays: list[np.ndarray], concurrency: int, model: str = MODEL,
) -> tuple[list[Outcome], list[Outcome]]:
    """Send every blocker at once, then, once all of them have reached the server, ``arrays`` as ``send_timed``.

    A client on the server's own cores may not send faster than the server answers, so its
    requests never fill the queue; sent while every instance is busy, they do, on any machine.
    Each blocker is a full batch, executed alone: all but one an instance wait in the queue.
    Returns (the blockers' outcomes, the arrays' outcomes).
    """
    metrics_url = server.metrics_url  # a container's asks Docker for its port each time
    waiting = len(blockers) - served_instances(served_config(server, model))
    assert wait_until_idle(metrics_url, timeout=30, quiet=0.2), "requests still in flight before the blockers"
    now = activity(metrics_url, model=model)
    assert now is not None, f"the metrics at {metrics_url} cannot be read"
    arrived = functools.partial(asyncio.to_thread, _until_blockers_arrived, metrics_url, model, len(blockers),
                                waiting, completed_before=now[1])
    return asyncio.run(_behind(server.grpc_url, blockers, arrays, arrived, model, concurrency))


class Load:
    """Requests to ``model`` from ``workers`` clients, each sending the next once answered, until stopped."""

    def __init__(self, url: str, model: str, inputs, workers: int, pause_after_error: float = 0.0) -> None:
        self.url, self.model, self.inputs, self.workers = url, model, inputs, workers
        self.pause_after_error = pause_after_error
        """Seconds a worker waits after an error before its next request, as a client that backs off would."""
        self.outcomes: list[tuple[float, float, str | None]] = []  # (sent, answered, error)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _worker(self, client) -> None:
        while not self.stopped.is_set():
            start = time.monotonic()
            try:
                await client.infer(self.model, self.inputs(), client_timeout=60)
                self.outcomes.append((start, time.monotonic(), None))
            except Exception as error:  # noqa: BLE001 - counted
                self.outcomes.append((start, time.monotonic(), str(error)))
                await asyncio.sleep(self.pause_after_error)

    async def _run(self) -> None:
        async with grpcaio.InferenceServerClient(self.url) as client:
            await asyncio.gather(*(self._worker(client) for _ in range(self.workers)))

    def failures(self) -> list[tuple[float, float, str | None]]:
        return [o for o in self.outcomes if o[2] is not None]

    def shed(self) -> list[tuple[float, float, str | None]]:
        """The failures that were the queue policy's answer: requests that waited past its timeout."""
        return [o for o in self.failures() if QUEUE_TIMEOUT in (o[2] or "")]

    def lost(self) -> list[tuple[float, float, str | None]]:
        """The failures other than the queue policy's answer."""
        return [o for o in self.failures() if QUEUE_TIMEOUT not in (o[2] or "")]


def watch_readiness(http: TritonHTTP, stop: threading.Event, samples: list[tuple[float, bool]]) -> None:
    while not stop.is_set():
        samples.append((time.monotonic(), http.ready()))
        time.sleep(0.02)


@dataclass(frozen=True)
class RequestCounts:
    """Triton's own count of a model's requests so far: answered, and failed."""

    success: int
    fail: int


def request_counts(server: Server, model: str = MODEL) -> RequestCounts:
    """``model``'s request counts from the server's per-model inference statistics."""
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        versions = client.get_inference_statistics(model, headers=admin_headers(server), as_json=True)["model_stats"]
    stats = [version.get("inference_stats", {}) for version in versions]
    return RequestCounts(sum(int(s.get("success", {}).get("count", 0)) for s in stats),
                         sum(int(s.get("fail", {}).get("count", 0)) for s in stats))


@dataclass(frozen=True)
class PerfAnalyzerRun:
    """One perf_analyzer run, and the server's request counts of the model it measured, before and after."""

    result: subprocess.CompletedProcess
    before: RequestCounts
    after: RequestCounts

    @property
    def output(self) -> str:
        return self.result.stdout + self.result.stderr

    @property
    def unstable(self) -> bool:
        """Whether perf_analyzer stopped because a level's measurements never stabilised (the machine was busy),
        whether it stopped at the range's first level (exit 2) or at a later one (exit 0)."""
        return self.result.returncode in (0, UNSTABLE_EXIT) and UNSTABLE_MESSAGE in self.output


def run_perf_analyzer(server: Server, args: list[str], model: str = MODEL, timeout: float = 600) -> PerfAnalyzerRun:
    """perf_analyzer with ``args`` (the server's URL among them), counted by ``server``'s statistics of ``model``."""
    before = request_counts(server, model)
    result = subprocess.run([str(PERF_ANALYZER), *args], capture_output=True, text=True, timeout=timeout)
    return PerfAnalyzerRun(result, before, request_counts(server, model))


def assert_served_without_error(run: PerfAnalyzerRun) -> None:
    """The server answered the requests perf_analyzer sent, none with an error, by the server's own count and
    by perf_analyzer's.

    Whether perf_analyzer's windows agree within its stability band says how quiet the machine was, not
    whether the server works: a run stopped for that is printed, so that it shows in the log, and passes.
    Any other non-zero exit fails.
    """
    tail = run.output[-3000:]
    if run.unstable:
        print(f"perf_analyzer could not stabilise its measurement (a busy machine, not a failure):\n{tail}")
    else:
        assert run.result.returncode == 0, tail
    errors = [line for line in run.output.splitlines() if any(e in line for e in REQUEST_ERRORS)]
    assert not errors, tail
    assert run.after.success > run.before.success, f"the server answered no request: {run.before} -> {run.after}"
    assert run.after.fail == run.before.fail, f"the server failed requests: {run.before} -> {run.after}\n{tail}"
