"""NVIDIA's perf_analyzer against the served models: the tutorial's command, its default random data included."""

from __future__ import annotations

import re

import pytest

from str_ocr.contract import VARIANTS
from str_ocr_client.http import ADMIN_HEADER, GRPC_ADMIN_HEADER

from ..helpers import PerfAnalyzerRun, assert_served_without_error, run_perf_analyzer

pytestmark = pytest.mark.integration
TUTORIAL = ["-m", "text_recognition", "-b", "2", "--shape", "input.1:1,32,100", "--concurrency-range", "2:16:2",
            "--percentile=95"]
SUMMARY = re.compile(r"^Concurrency: (\d+), throughput: ([\d.]+) infer/sec, latency (\d+) usec$", re.MULTILINE)
# Shorter windows than perf_analyzer's 5 s keep the suite quick; a wider stability band keeps it steady on a
# shared machine. Nothing here changes what is sent.
QUICK = ["--measurement-interval", "1000", "--stability-percentage", "50", "--max-trials", "20"]


def perf_analyzer(server, *args: str, grpc: bool = False) -> PerfAnalyzerRun:
    """perf_analyzer against ``server``, over HTTP (its default) or gRPC, with its admin key where it has one
    (perf_analyzer reads the model's config and statistics, which a restricted server keeps behind it)."""
    url = ["-i", "grpc", "-u", server.grpc_url] if grpc else ["-u", server.http_url]
    key = ["-H", f"{GRPC_ADMIN_HEADER if grpc else ADMIN_HEADER}:{server.admin_key}"] if server.admin_key else []
    return run_perf_analyzer(server, [*args, *url, *key, *QUICK])


def assert_levels_reported(run: PerfAnalyzerRun, concurrencies: list[int]) -> None:
    """perf_analyzer's summary names every level, each with a throughput and a latency; a run that could not
    stabilise stops early, and names only the levels it finished."""
    levels = SUMMARY.findall(run.result.stdout)
    reported = [int(c) for c, _, _ in levels]
    assert reported == (concurrencies[:len(reported)] if run.unstable else concurrencies), run.output[-2000:]
    assert all(float(t) > 0 and int(p95) > 0 for _, t, p95 in levels)


@pytest.mark.parametrize("grpc", [False, True], ids=["http", "grpc"])
def test_the_tutorials_command_runs_as_written_with_its_default_random_data(serve, grpc):
    run = perf_analyzer(serve("dynamic_batching"), *TUTORIAL, grpc=grpc)
    assert_served_without_error(run)
    assert_levels_reported(run, [2, 4, 6, 8, 10, 12, 14, 16])
    assert run.unstable or "Inferences/Second vs. Client p95 Batch Latency" in run.result.stdout


@pytest.mark.parametrize("variant", [*VARIANTS, None], ids=[*VARIANTS, "config.pbtxt"])
def test_every_variant_serves_perf_analyzers_default_request(serve, variant):
    tutorial = [*TUTORIAL[:-2], "2:16:14", TUTORIAL[-1]]  # the range's two ends
    run = perf_analyzer(serve(variant), *tutorial)
    assert_served_without_error(run)
    assert_levels_reported(run, [2, 16])


def test_perf_analyzer_reports_what_the_model_refuses(serve):
    run = perf_analyzer(serve("dynamic_batching"), "-m", "text_recognition", "-b", "1", "--shape", "input.1:1,32,3",
                        "--concurrency-range", "1:1")
    assert run.result.returncode != 0
    assert "3 pixels wide" in run.output
