"""What the server counts: Triton's per-model statistics and its Prometheus metrics."""

from __future__ import annotations

import time
import urllib.request

import tritonclient.grpc as grpcclient

from str_ocr.contract import RECOGNIZER
from str_ocr_client.http import GRPC_ADMIN_HEADER


def model_statistics(client: grpcclient.InferenceServerClient, model: str = RECOGNIZER,
                     admin_key: str | None = None) -> dict:
    """Triton's statistics of ``model``, as JSON (counts and nanoseconds are strings there)."""
    headers = {GRPC_ADMIN_HEADER: admin_key} if admin_key else None
    return client.get_inference_statistics(model, headers=headers, as_json=True)["model_stats"][0]


def execution_counts(client: grpcclient.InferenceServerClient, model: str = RECOGNIZER,
                     admin_key: str | None = None) -> tuple[int, int]:
    """(inference_count, execution_count) of ``model`` so far: images served, and forward passes run."""
    return counts(model_statistics(client, model, admin_key))


def counts(stats: dict) -> tuple[int, int]:
    """(inference_count, execution_count) in ``model_statistics``' answer."""
    return int(stats.get("inference_count", 0)), int(stats.get("execution_count", 0))


def compute_seconds(stats: dict) -> float:
    """Seconds the executions counted in ``model_statistics``' answer computed (input, infer and output), each
    execution once: from the batch statistics, since the inference statistics count a batch's time once for every
    request in it."""
    steps = ("compute_input", "compute_infer", "compute_output")
    return sum(int(size.get(step, {}).get("ns", 0)) for size in stats.get("batch_stats", []) for step in steps) / 1e9


def counts_since(client: grpcclient.InferenceServerClient, before: tuple[int, int], inferences: int,
                 model: str = RECOGNIZER, admin_key: str | None = None, timeout: float = 10) -> tuple[int, int]:
    """The (inferences, executions) added since ``before``, once ``inferences`` are counted.

    Triton updates a model's statistics when an execution has finished, which can be just after
    its responses reached the client.
    """
    deadline = time.monotonic() + timeout
    while True:
        now = execution_counts(client, model, admin_key)
        added = now[0] - before[0], now[1] - before[1]
        if added[0] >= inferences or time.monotonic() > deadline:
            return added
        time.sleep(0.05)


def scrape(metrics_url: str) -> str:
    """The text of the server's Prometheus endpoint."""
    with urllib.request.urlopen(f"http://{metrics_url}/metrics", timeout=5) as response:
        return response.read().decode()


def sample_total(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of metric ``name`` in a scrape's ``text`` whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith((name + "{", name + " ")) and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def metric_total(metrics_url: str, name: str, **labels: str) -> float:
    """Sum of the samples of metric ``name`` whose labels include ``labels``, scraped now."""
    return sample_total(scrape(metrics_url), name, **labels)
