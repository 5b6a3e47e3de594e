"""A small run of the benchmark behind `make bench`: real servers, NVIDIA's perf_analyzer, the files it writes."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from str_ocr_bench.report import P95_BUDGETS_MS

from ..helpers import UNSTABLE_EXIT, UNSTABLE_MESSAGE

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
VARIANTS = ["no_batching", "dynamic_batching"]
LEVELS = [4, 8]


def measured_levels(results: dict, output: str) -> dict[str, list[int]]:
    """Each variant's concurrencies that perf_analyzer measured, every level served by the server's own count.

    A level perf_analyzer could not stabilise even on the sweep's second, longer try says how busy the
    machine was, not whether the server works: it is printed, so that it shows in the log, and passes.
    """
    measured = {}
    for variant, levels in results["served"].items():
        assert len(levels) == len(LEVELS), variant
        for concurrency, level in zip(LEVELS, levels):
            where = f"{variant} at concurrency {concurrency}"
            assert level["exit_code"] in (0, UNSTABLE_EXIT), f"{where}: perf_analyzer exited {level['exit_code']}"
            assert level["images_per_execution"] > 0, f"{where}: the server counted no image"
            if level["exit_code"] == UNSTABLE_EXIT:
                assert UNSTABLE_MESSAGE in output, output[-3000:]
                print(f"{where}: perf_analyzer could not stabilise (a busy machine, not a failure)")
        measured[variant] = [c for c, level in zip(LEVELS, levels) if level["exit_code"] == 0]
    return measured


def test_a_small_sweep_writes_perf_analyzers_csv_its_table_plot_efficiency_and_choice(tmp_path):
    out = tmp_path / "bench"
    command = [sys.executable, "scripts/sweep.py", "--variants", ",".join(VARIANTS), "--concurrency-range", "4:8:4",
               "--alone-batches", "1,8", "--alone-threads", "1", "--alone-seconds", "0.3",
               "--measurement-interval", "1000", "--stability-percentage", "50",
               "--no-width-mix", "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.name for p in out.iterdir()} >= {"README.md", "sweep.csv", "sweep.json", "sweep.png", "machine.json",
                                               "perf_analyzer"}
    results = json.loads((out / "sweep.json").read_text())
    measured = measured_levels(results, done.stdout + done.stderr)
    assert list(measured) == VARIANTS
    raw = list(csv.DictReader((out / "perf_analyzer" / "dynamic_batching.csv").open()))
    assert [int(r["Concurrency"]) for r in raw] == measured["dynamic_batching"]
    assert all(float(r["Inferences/Second"]) > 0 for r in raw)
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    served = [r for r in rows if r["variant"] == "dynamic_batching"]
    assert [r["throughput_infer_per_s"] for r in served] == [f"{float(r['Inferences/Second']):.1f}" for r in raw]
    # The server spent CPU time on what it served, set against the model alone's cheapest. Whether serving cost
    # more compares two moments of a shared machine, so the benchmark reports it and the test checks the arithmetic.
    cheapest_ms = min(r["cpu_seconds_per_image"] for r in results["model_alone"]) * 1e3
    for row in rows:
        server_ms = float(row["server_cpu_ms_per_image"])
        assert server_ms > 0 and float(row["efficiency"]) == pytest.approx(cheapest_ms / server_ms, abs=1e-3, rel=1e-3)
    assert {r["batch_size"] for r in results["model_alone"]} == {1, 8}
    assert {r["engine"] for r in results["model_alone"]} >= {"torch NCHW", "torch NHWC", "onnxruntime", "openvino f32"}
    assert [p["p95_budget_ms"] for p in results["recommendations"]] == P95_BUDGETS_MS
    assert {p["variant"] for p in results["recommendations"]} <= {*VARIANTS, None}
    table = (out / "README.md").read_text()
    assert "serving efficiency" in table and "## What to deploy" in table
    assert ("| dynamic_batching |" in table) == bool(measured["dynamic_batching"])
    assert ("Dynamic batching serves" in table) == all(measured.values())
    assert (out / "sweep.png").stat().st_size > 10_000
