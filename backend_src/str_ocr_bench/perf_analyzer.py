"""NVIDIA's perf_analyzer, run as a user runs it, and its CSV read back."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from str_ocr.contract import INPUT_HEIGHT, INPUT_NAME, TUTORIAL_WIDTH

TUTORIAL_SHAPE = f"{INPUT_NAME}:1,{INPUT_HEIGHT},{TUTORIAL_WIDTH}"
"""The tutorial's ``--shape``: one 32x100 line per image."""


def binary() -> Path:
    """The perf_analyzer that ``make setup`` put in this virtualenv."""
    found = Path(sys.prefix, "bin", "perf_analyzer")
    if not found.exists():
        raise SystemExit(f"no perf_analyzer at {found}: run `make setup` (it comes with tritonclient's wheel)")
    return found


@dataclass(frozen=True)
class Measurement:
    """One concurrency level as perf_analyzer's CSV gives it (latencies in microseconds)."""

    concurrency: int
    throughput: float
    """Inferences (images) per second."""
    p50_us: float
    p95_us: float
    p99_us: float
    queue_us: float
    compute_infer_us: float


def read_csv(path: Path) -> list[Measurement]:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    return [Measurement(int(r["Concurrency"]), float(r["Inferences/Second"]), float(r["p50 latency"]),
                        float(r["p95 latency"]), float(r["p99 latency"]), float(r["Server Queue"]),
                        float(r["Server Compute Infer"])) for r in rows]


@dataclass(frozen=True)
class Run:
    exit_code: int
    """0: every level measured and stable; 2: perf_analyzer could not stabilise (its own exit code)."""
    measurements: list[Measurement]
    output: str


@dataclass(frozen=True)
class Window:
    """How perf_analyzer decides a measurement is done: windows of ``interval_ms``, and the last three within
    ``stability_percent`` of each other (its defaults: 5000 ms and 10 %)."""

    interval_ms: int = 3000
    stability_percent: int = 10

    def args(self) -> list[str]:
        return ["--measurement-interval", str(self.interval_ms), "--stability-percentage", str(self.stability_percent)]


def run(url: str, model: str, concurrency: str, csv_path: Path, batch_size: int = 2, shape: str | None = TUTORIAL_SHAPE,
        window: Window = Window(), extra: Sequence[str] = (), timeout: float = 900) -> Run:
    """``perf_analyzer -m MODEL -b B --shape ... --concurrency-range C --percentile=95 -f CSV`` over gRPC."""
    command = [str(binary()), "-m", model, "-b", str(batch_size), "--concurrency-range", concurrency,
               "--percentile=95", "-u", url, "-i", "grpc", "-f", str(csv_path), *window.args(),
               *(["--shape", shape] if shape else []), *extra]
    csv_path.unlink(missing_ok=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    measurements = read_csv(csv_path) if csv_path.exists() else []
    return Run(done.returncode, measurements, done.stdout + done.stderr)
