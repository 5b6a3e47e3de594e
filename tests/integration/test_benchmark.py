"""Smoke runs of the perf tool and the configuration sweep against real servers."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

import pytest

from scripts import sweep

pytestmark = pytest.mark.integration
SUMMARY = re.compile(r"^Concurrency: (\d+), throughput: ([\d.]+) infer/sec, latency (\d+) usec$")


def test_perf_speaks_perf_analyzer(serve, tmp_path):
    server = serve("dynamic_batching")
    report = tmp_path / "perf.csv"
    command = [sys.executable, "-m", "client.perf", "-m", "text_recognition", "-b", "2", "--shape", "input.1:1,32,100",
               "--concurrency-range", "2:4:2", "--percentile=95", "-u", server.grpc_url, "-i", "grpc",
               "--measurement-interval", "500", "-f", str(report), "--processes", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    summary = [SUMMARY.match(line) for line in result.stdout.splitlines()]
    levels = [m for m in summary if m]
    assert [int(m.group(1)) for m in levels] == [2, 4]
    assert all(float(m.group(2)) > 0 and int(m.group(3)) > 0 for m in levels)
    assert "Inferences/Second vs. Client p95 Batch Latency" in result.stdout
    assert re.search(r"Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute input \d+ usec"
                     r" \+ compute infer \d+ usec \+ compute output \d+ usec\)", result.stdout)
    assert re.search(r"Images per execution: [\d.]+", result.stdout)
    assert re.search(r"CPU: load generator \d+\.\d\d cores busy, of \d+ here", result.stdout)
    rows = list(csv.DictReader(report.open()))
    assert [r["Concurrency"] for r in rows] == ["2", "4"] and float(rows[1]["Inferences/Second"]) > 0


def test_perf_rejects_what_it_cannot_do(serve):
    server = serve("dynamic_batching")
    base = [sys.executable, "-m", "client.perf", "-m", "text_recognition", "-u", server.grpc_url]
    too_big = subprocess.run(base + ["-b", "64", "--shape", "input.1:1,32,100"], capture_output=True, text=True, timeout=60)
    assert too_big.returncode != 0 and "max_batch_size 8" in too_big.stderr
    no_shape = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert no_shape.returncode != 0 and "--shape input.1" in no_shape.stderr
    http = subprocess.run(base + ["-i", "http"], capture_output=True, text=True, timeout=60)
    assert http.returncode != 0 and "invalid choice" in http.stderr


def test_a_small_sweep_writes_its_table_plot_and_choice(tmp_path):
    out = tmp_path / "bench"
    sweep.main(["--variants", "dynamic_batching", "--concurrency-range", "4:8:4", "--alone-batches", "1,8",
                "--alone-seconds", "0.2", "--measurement-interval", "500", "--no-width-mix", "--out", str(out)])
    assert {p.name for p in out.iterdir()} >= {"README.md", "sweep.csv", "sweep.json", "sweep.png", "machine.json"}
    results = json.loads((out / "sweep.json").read_text())
    assert [r["concurrency"] for r in results["served"]["dynamic_batching"]] == [4, 8]
    assert {r["batch_size"] for r in results["model_alone"]} == {1, 8}
    table = (out / "README.md").read_text()
    assert "| dynamic_batching |" in table and "## What to deploy" in table
    # One pick per p95 budget: the measured variant where it fits the budget (timing depends on the machine).
    assert [p["p95_budget_ms"] for p in results["recommendations"]] == sweep.P95_BUDGETS_MS
    assert {p["variant"] for p in results["recommendations"]} <= {"dynamic_batching", None}
    assert (out / "sweep.png").stat().st_size > 10_000
    # The sweep knows the server's processes: the model instances did the work, and it says so.
    cores = results["served"]["dynamic_batching"][-1]["cores"]
    assert set(cores) == set(sweep.CPU_GROUPS)
    assert cores[sweep.INSTANCES] > max(0.05, cores[sweep.TRITONSERVER]) and cores[sweep.TRITONSERVER] >= 0
    assert "cores went, at concurrency 8" in table
