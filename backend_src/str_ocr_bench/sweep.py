"""Every configuration through the real server and NVIDIA's perf_analyzer, beside the model alone.

For each configuration it starts the server and runs the tutorial's measurement one concurrency level at a
time (``-b 2 --shape input.1:1,32,100 --percentile=95``), reading around each level the CPU time of the
server's processes and the images Triton counted; it times the model alone in-process; it measures lines
of natural widths with and without ragged batching; and ``report`` turns it into tables, a plot and a pick.
"""

from __future__ import annotations

import base64
import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient
from tqdm import tqdm

from str_ocr.contract import INPUT_NAME, RECOGNIZER
from str_ocr_client.stats import execution_counts, metric_total
from str_ocr_server.process import ServerProcess

from . import perf_analyzer
from .cpu import cpu_seconds

MIX_VARIANTS = ["ragged_batching", "dynamic_batching", "no_batching"]
DIRECT = ("--no-grpc-guard",)
"""The sweep compares tritonserver's configurations, so perf_analyzer talks to the server itself; the launcher's
gRPC proxy (on by default with server 2.51) costs the same for each, and is measured apart (docs/serving.md)."""


@dataclass(frozen=True)
class Level:
    """One configuration at one concurrency: perf_analyzer's figures, and what the server spent on them."""

    variant: str
    measured: perf_analyzer.Measurement | None
    exit_code: int
    images_per_execution: float
    tritonserver_cpu_seconds_per_image: float
    """CPU time of the tritonserver process (requests in and out, scheduling) per image Triton counted."""
    instances_cpu_seconds_per_image: float
    """CPU time of the model instances' stub processes (the network, and the Python around it) per image."""

    @property
    def server_cpu_seconds_per_image(self) -> float:
        return self.tritonserver_cpu_seconds_per_image + self.instances_cpu_seconds_per_image


def measure_level(server: ServerProcess, client: grpcclient.InferenceServerClient, variant: str, concurrency: int,
                  csv_path: Path, batch_size: int, window: perf_analyzer.Window,
                  shape: str | None = perf_analyzer.TUTORIAL_SHAPE, extra: tuple[str, ...] = ()) -> Level:
    """One perf_analyzer run; where it cannot stabilise (exit 2), one more with windows twice as long."""
    groups = [server.triton_pids(), server.stub_pids(RECOGNIZER)]
    images, executions = execution_counts(client)
    cpu = [cpu_seconds(pids) for pids in groups]
    for attempt in (window, replace(window, interval_ms=2 * window.interval_ms)):
        run = perf_analyzer.run(server.grpc_url, RECOGNIZER, f"{concurrency}:{concurrency}", csv_path, batch_size,
                                shape, attempt, extra)
        if run.exit_code != 2:
            break
    images_after, executions_after = execution_counts(client)
    images, executions = images_after - images, executions_after - executions
    spent = [(cpu_seconds(pids) - before) / images if images else 0.0 for pids, before in zip(groups, cpu)]
    if run.exit_code:
        tqdm.write(f"{variant} at concurrency {concurrency}: perf_analyzer exited {run.exit_code}: "
                   f"{run.output.strip().splitlines()[-1] if run.output.strip() else ''}")
    return Level(variant, run.measurements[0] if run.measurements else None, run.exit_code,
                 images / executions if executions else 0.0, *spent)


def measure_variant(repository: Path, variant: str, levels: list[int], out: Path, logs: Path, batch_size: int,
                    window: perf_analyzer.Window) -> list[Level]:
    """Each level in turn against one server; perf_analyzer's rows go to ``out/perf_analyzer/VARIANT.csv``."""
    results, rows = [], []
    with ServerProcess(config_name=variant, models=[RECOGNIZER], repository=repository,
                       log_path=logs / f"{variant}.log", launcher_args=DIRECT) as server, \
            grpcclient.InferenceServerClient(server.grpc_url) as client, tempfile.TemporaryDirectory() as tmp:
        for concurrency in tqdm(levels, desc=variant, leave=False):
            level_csv = Path(tmp, f"c{concurrency}.csv")
            results.append(measure_level(server, client, variant, concurrency, level_csv, batch_size, window))
            if level_csv.exists():
                lines = level_csv.read_text().splitlines()
                rows += lines[:1] * (not rows) + lines[1:]
    (out / "perf_analyzer").mkdir(parents=True, exist_ok=True)
    (out / "perf_analyzer" / f"{variant}.csv").write_text("\n".join(rows) + "\n")
    return results


def width_mix_data(path: Path, count: int = 120, seed: int = 3) -> Path:
    """perf_analyzer ``--input-data``: generated text lines as the served preprocessing scales them, one per
    request."""
    from str_ocr.preprocess import normalize  # noqa: PLC0415
    from str_ocr.synth import TextLineSynth  # noqa: PLC0415

    synth = TextLineSynth(seed)
    data = []
    for _ in range(count):
        line = normalize(synth.sample().image)[np.newaxis]
        data.append({INPUT_NAME: {"b64": base64.b64encode(line.tobytes()).decode(), "shape": list(line.shape)}})
    path.write_text(json.dumps({"data": data}))
    return path


def width_mix(repository: Path, logs: Path, window: perf_analyzer.Window) -> list[dict]:
    """Lines of about 30 to 660 pixels, one per request, concurrency 16, with and without ragged batching."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = width_mix_data(Path(tmp, "lines.json"))
        for variant in tqdm(MIX_VARIANTS, desc="width mix", leave=False):
            with ServerProcess(config_name=variant, models=[RECOGNIZER], repository=repository,
                               log_path=logs / f"{variant}-mix.log", launcher_args=DIRECT) as server, \
                    grpcclient.InferenceServerClient(server.grpc_url) as client:
                level = measure_level(server, client, variant, 16, Path(tmp, f"{variant}.csv"), 1, window,
                                      shape=None, extra=("--input-data", str(data)))
                real = metric_total(server.metrics_url, "str_ocr_columns_total", kind="real")
                padding = metric_total(server.metrics_url, "str_ocr_columns_total", kind="padding")
            rows.append({"variant": variant, "exit_code": level.exit_code,
                         "lines_per_second": level.measured.throughput if level.measured else 0.0,
                         "p95_us": level.measured.p95_us if level.measured else 0.0,
                         "images_per_execution": level.images_per_execution,
                         "padding_waste": padding / (real + padding) if real + padding else 0.0})
    return rows
