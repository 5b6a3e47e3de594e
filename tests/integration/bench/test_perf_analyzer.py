"""NVIDIA's perf_analyzer against the served models: the tutorial's command, its default random data included."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from str_ocr.contract import ADMIN_HEADER, GRPC_ADMIN_HEADER, VARIANTS

pytestmark = pytest.mark.integration
PERF_ANALYZER = Path(sys.prefix, "bin", "perf_analyzer")
TUTORIAL = ["-m", "text_recognition", "-b", "2", "--shape", "input.1:1,32,100", "--concurrency-range", "2:16:2",
            "--percentile=95"]
SUMMARY = re.compile(r"^Concurrency: (\d+), throughput: ([\d.]+) infer/sec, latency (\d+) usec$", re.MULTILINE)
# Shorter windows than perf_analyzer's 5 s keep the suite quick; a wider stability band keeps it steady on a
# shared machine. Nothing here changes what is sent.
QUICK = ["--measurement-interval", "1000", "--stability-percentage", "50", "--max-trials", "20"]


def perf_analyzer(server, *args: str, grpc: bool = False) -> subprocess.CompletedProcess:
    """perf_analyzer against ``server``, over HTTP (its default) or gRPC, with its admin key where it has one
    (perf_analyzer reads the model's config and statistics, which a restricted server keeps behind it)."""
    url = ["-i", "grpc", "-u", server.grpc_url] if grpc else ["-u", server.http_url]
    key = ["-H", f"{GRPC_ADMIN_HEADER if grpc else ADMIN_HEADER}:{server.admin_key}"] if server.admin_key else []
    return subprocess.run([str(PERF_ANALYZER), *args, *url, *key, *QUICK], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("grpc", [False, True], ids=["http", "grpc"])
def test_the_tutorials_command_runs_as_written_with_its_default_random_data(serve, grpc):
    result = perf_analyzer(serve("dynamic_batching"), *TUTORIAL, grpc=grpc)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    levels = SUMMARY.findall(result.stdout)
    assert [int(c) for c, _, _ in levels] == [2, 4, 6, 8, 10, 12, 14, 16]
    assert all(float(t) > 0 and int(p95) > 0 for _, t, p95 in levels)
    assert "Inferences/Second vs. Client p95 Batch Latency" in result.stdout


@pytest.mark.parametrize("variant", [*VARIANTS, None], ids=[*VARIANTS, "config.pbtxt"])
def test_every_variant_serves_perf_analyzers_default_request(serve, variant):
    tutorial = [*TUTORIAL[:-2], "2:16:14", TUTORIAL[-1]]  # the range's two ends
    result = perf_analyzer(serve(variant), *tutorial)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert [int(c) for c, _, _ in SUMMARY.findall(result.stdout)] == [2, 16]


def test_perf_analyzer_reports_what_the_model_refuses(serve):
    result = perf_analyzer(serve("dynamic_batching"), "-m", "text_recognition", "-b", "1", "--shape", "input.1:1,32,3",
                           "--concurrency-range", "1:1")
    assert result.returncode != 0
    assert "3 pixels wide" in result.stdout + result.stderr
