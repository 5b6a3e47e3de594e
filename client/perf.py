"""A load generator that speaks perf_analyzer's language, for machines where perf_analyzer is not available.

    .venv/bin/python -m client.perf -m text_recognition -b 2 --shape input.1:1,32,100 \\
        --concurrency-range 2:16:2 --percentile=95 [-u localhost:8001] [-f out.csv]

Same flags and meanings as perf_analyzer (gRPC only), same stabilisation (measurement windows repeated until
the last three agree within ``--stability-percentage`` on throughput and latency) and the same summary
lines, plus the server-side breakdown from Triton's statistics API and the images per execution. The load
can come from several processes (``--processes``) so that the client is not the bottleneck; it reports the
cores the load generator kept busy, and those of the server's processes where it is told their ids (on a
machine that runs both, the load generator's share is taken from the server).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import multiprocessing as mp
import os
import queue
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tritonclient.utils import np_to_triton_dtype, triton_to_np_dtype

STABLE_WINDOWS = 3


# --- What to send ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[int, ...]  # without the batch dimension
    datatype: str = "FP32"


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``input.1:1,32,100`` -> ("input.1", (1, 32, 100)), as perf_analyzer's ``--shape``."""
    name, sep, dims = text.rpartition(":")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--shape takes NAME:D1,D2,... (got {text!r})")
    try:
        return name, tuple(int(d) for d in dims.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape dims must be integers (got {dims!r})") from None


def model_inputs(url: str, model: str, shapes: dict[str, tuple[int, ...]], need_shapes: bool = True) -> tuple[list[InputSpec], int]:
    """The model's inputs (shapes from ``--shape`` where a dim is variable) and its max batch size."""
    import tritonclient.grpc as grpcclient  # noqa: PLC0415

    with grpcclient.InferenceServerClient(url) as client:
        metadata = client.get_model_metadata(model, as_json=True)
        config = client.get_model_config(model, as_json=True)["config"]
    max_batch = int(config.get("max_batch_size", 0))
    specs = []
    for tensor in metadata["inputs"]:
        dims = [int(d) for d in tensor["shape"]][1 if max_batch else 0 :]
        shape = shapes.get(tensor["name"], tuple(dims))
        if need_shapes and any(d < 0 for d in shape):
            raise SystemExit(f"perf: input {tensor['name']} has a variable shape {dims}: give it with --shape {tensor['name']}:...")
        specs.append(InputSpec(tensor["name"], tuple(shape), tensor["datatype"]))
    return specs, max_batch


def make_requests(specs: Sequence[InputSpec], batch: int, input_data: str, max_batch: int, count: int = 64,
                  seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` requests to cycle through: random or zero data, a perf_analyzer JSON file, or text lines."""
    rng = np.random.default_rng(seed)
    lead = (batch,) if max_batch else ()
    if input_data == "text-lines":
        return _text_line_requests(specs, batch, count, seed)
    if input_data not in ("random", "zero"):
        return _json_requests(Path(input_data), specs, lead)
    requests = []
    for _ in range(count if input_data == "random" else 1):
        arrays = {}
        for spec in specs:
            dtype = triton_to_np_dtype(spec.datatype)
            shape = lead + spec.shape
            if input_data == "zero":
                arrays[spec.name] = np.zeros(shape, dtype)
            elif np.issubdtype(dtype, np.floating):
                arrays[spec.name] = rng.uniform(-1, 1, shape).astype(dtype)
            else:
                arrays[spec.name] = rng.integers(0, 100, shape).astype(dtype)
        requests.append(arrays)
    return requests


def _json_requests(path: Path, specs: Sequence[InputSpec], lead: tuple[int, ...]) -> list[dict[str, np.ndarray]]:
    """perf_analyzer's input-data format: ``{"data": [{"NAME": {"content": [...], "shape": [...]}}, ...]}``."""
    entries = json.loads(path.read_text())["data"]
    requests = []
    for entry in entries:
        arrays = {}
        for spec in specs:
            value = entry[spec.name]
            content, shape = (value["content"], value.get("shape", spec.shape)) if isinstance(value, dict) else (value, spec.shape)
            one = np.asarray(content, triton_to_np_dtype(spec.datatype)).reshape(shape)
            arrays[spec.name] = np.broadcast_to(one, lead + one.shape).copy() if lead else one
        requests.append(arrays)
    return requests


def _text_line_requests(specs: Sequence[InputSpec], batch: int, count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Generated text lines at their natural widths (height 32): the realistic mix a recogniser sees."""
    from str_ocr import normalize  # noqa: PLC0415
    from str_ocr.synth import TextLineSynth  # noqa: PLC0415

    (spec,) = specs
    synth = TextLineSynth(seed)
    requests = []
    for _ in range(count):
        first = synth.sample()
        width = first.image.shape[1]
        lines = [first.image] + [synth.render(synth.random_text(), width) for _ in range(batch - 1)]
        requests.append({spec.name: normalize(np.stack(lines))[:, np.newaxis]})
    return requests


# --- Sending it ------------------------------------------------------------------------------


def _load_process(url: str, model: str, requests: list[dict[str, np.ndarray]], concurrency: int, offset: int,
                  records: mp.Queue, stop: mp.Event) -> None:
    """Keep ``concurrency`` requests in flight until ``stop``; report (end time, latency s, ok) in chunks."""
    asyncio.run(_drive(url, model, requests, concurrency, offset, records, stop))


async def _drive(url, model, requests, concurrency, offset, records, stop) -> None:
    import tritonclient.grpc.aio as grpcaio  # noqa: PLC0415

    pending: list[tuple[float, float, bool]] = []

    def build(arrays: dict[str, np.ndarray]):
        inputs = []
        for name, array in arrays.items():
            tensor = grpcaio.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
            tensor.set_data_from_numpy(array)
            inputs.append(tensor)
        return inputs

    prepared = [build(r) for r in requests]

    async with grpcaio.InferenceServerClient(url) as client:

        async def worker(index: int) -> None:
            i = offset + index
            while not stop.is_set():
                start = time.monotonic()
                try:
                    await client.infer(model, prepared[i % len(prepared)])
                    ok = True
                except Exception:  # noqa: BLE001 - counted as a failed request
                    ok = False
                end = time.monotonic()
                pending.append((end, end - start, ok))
                i += concurrency

        async def flush() -> None:
            while not stop.is_set():
                await asyncio.sleep(0.05)
                if pending:
                    records.put(pending[:])
                    pending.clear()

        await asyncio.gather(flush(), *(worker(k) for k in range(concurrency)))
    if pending:
        records.put(pending)


# --- Measuring it ----------------------------------------------------------------------------


@dataclass
class ServerStats:
    """Differences of Triton's statistics over a measurement, per model."""

    inference_count: int = 0
    execution_count: int = 0
    success_count: int = 0
    queue_us: float = 0.0
    compute_input_us: float = 0.0
    compute_infer_us: float = 0.0
    compute_output_us: float = 0.0
    request_us: float = 0.0

    @property
    def images_per_execution(self) -> float:
        return self.inference_count / self.execution_count if self.execution_count else 0.0


def _stats_snapshot(client) -> dict[str, dict[str, int]]:
    stats = client.get_inference_statistics("", as_json=True)["model_stats"]  # every model: ensembles' steps too
    snapshot = {}
    for entry in stats:
        infer = entry.get("inference_stats", {})
        snapshot[entry["name"]] = {
            "inference_count": int(entry.get("inference_count", 0)),
            "execution_count": int(entry.get("execution_count", 0)),
            "success_count": int(infer.get("success", {}).get("count", 0)),
            **{f"{k}_ns": int(infer.get(k, {}).get("ns", 0)) for k in ("success", "queue", "compute_input", "compute_infer", "compute_output")},
        }
    return snapshot


def _stats_difference(after: dict, before: dict) -> dict[str, ServerStats]:
    result = {}
    for name, now in after.items():
        then = before.get(name, {k: 0 for k in now})
        d = {k: now[k] - then.get(k, 0) for k in now}
        if d["inference_count"] <= 0:
            continue
        n = max(1, d["success_count"])
        result[name] = ServerStats(
            d["inference_count"], d["execution_count"], d["success_count"], d["queue_ns"] / n / 1e3,
            d["compute_input_ns"] / n / 1e3, d["compute_infer_ns"] / n / 1e3, d["compute_output_ns"] / n / 1e3,
            d["success_ns"] / n / 1e3,
        )
    return result


@dataclass
class LevelResult:
    """One concurrency level's stable measurement."""

    concurrency: int
    batch_size: int
    requests: int
    failures: int
    throughput: float  # inferences per second: requests per second times the batch size
    latency_us: dict[str, float]  # avg, p50, p90, p95, p99 (client side, per request)
    stable: bool
    server: dict[str, ServerStats] = field(default_factory=dict)
    cores: dict[str, float] = field(default_factory=dict)  # CPU seconds per second, per group of processes

    def latency(self, percentile: int | None) -> float:
        return self.latency_us[f"p{percentile}" if percentile else "avg"]


def _window_result(records: list[tuple[float, float, bool]], seconds: float, batch: int, concurrency: int) -> LevelResult:
    ok = np.array([lat for _, lat, good in records if good]) * 1e6
    latency = {"avg": float(ok.mean()) if len(ok) else 0.0}
    latency |= {f"p{p}": float(np.percentile(ok, p)) if len(ok) else 0.0 for p in (50, 90, 95, 99)}
    return LevelResult(concurrency, batch, len(ok), len(records) - len(ok), len(ok) * batch / seconds, latency, False)


def _is_stable(windows: list[LevelResult], percentile: int | None, tolerance: float) -> bool:
    if len(windows) < STABLE_WINDOWS:
        return False
    last = windows[-STABLE_WINDOWS:]
    for values in ([w.throughput for w in last], [w.latency(percentile) for w in last]):
        mean = float(np.mean(values))
        if mean <= 0 or any(abs(v - mean) > tolerance * mean for v in values):
            return False
    return True


def _merge(windows: list[LevelResult]) -> LevelResult:
    merged = LevelResult(windows[0].concurrency, windows[0].batch_size, sum(w.requests for w in windows),
                         sum(w.failures for w in windows), float(np.mean([w.throughput for w in windows])),
                         {k: float(np.mean([w.latency_us[k] for w in windows])) for k in windows[0].latency_us}, True)
    return merged


@dataclass
class Settings:
    model: str
    url: str = "localhost:8001"
    batch_size: int = 1
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    concurrency: tuple[int, int, int] = (1, 1, 1)
    percentile: int | None = None
    measurement_interval_ms: int = 5000
    stability_percentage: float = 10.0
    max_trials: int = 10
    input_data: str = "random"
    processes: int = 1
    verbose: bool = True
    watch: dict[str, list[int]] = field(default_factory=dict)  # more processes whose CPU time to report, by name

    @property
    def levels(self) -> list[int]:
        start, end, step = self.concurrency
        return list(range(start, max(start, end) + 1, max(1, step)))


def measure_level(settings: Settings, requests: list[dict[str, np.ndarray]], concurrency: int) -> LevelResult:
    """Run ``concurrency`` requests in flight until the windows stabilise (or ``max_trials``)."""
    import tritonclient.grpc as grpcclient  # noqa: PLC0415

    context = mp.get_context("spawn")
    records, stop = context.Queue(), context.Event()
    shares = [concurrency // settings.processes + (i < concurrency % settings.processes) for i in range(settings.processes)]
    offsets = np.cumsum([0, *shares[:-1]])
    workers = [context.Process(target=_load_process, daemon=True,
                               args=(settings.url, settings.model, requests, share, int(offset), records, stop))
               for share, offset in zip(shares, offsets) if share]
    for worker in workers:
        worker.start()
    interval = settings.measurement_interval_ms / 1e3
    windows: list[LevelResult] = []
    snapshots = []
    cpu: list[dict[str, float]] = []
    watched = {LOAD_GENERATOR: [os.getpid(), *(w.pid for w in workers)], **settings.watch}
    received: list[tuple[float, float, bool]] = []
    try:
        with grpcclient.InferenceServerClient(settings.url) as client:
            _wait_for_first(records, received, workers)
            boundary = time.monotonic()
            snapshots.append(_stats_snapshot(client))
            cpu.append(cpu_snapshot(watched))
            while len(windows) < settings.max_trials:
                end = boundary + interval
                _collect_until(records, received, end)
                snapshots.append(_stats_snapshot(client))
                cpu.append(cpu_snapshot(watched))
                in_window = [r for r in received if boundary <= r[0] < end]
                received = [r for r in received if r[0] >= end]
                windows.append(_window_result(in_window, interval, settings.batch_size, concurrency))
                boundary = end
                if settings.verbose:
                    w = windows[-1]
                    print(f"  Pass [{len(windows)}] throughput: {w.throughput:.2f} infer/sec. "
                          f"{'p' + str(settings.percentile) if settings.percentile else 'Avg'} latency: "
                          f"{w.latency(settings.percentile):.0f} usec", flush=True)
                if _is_stable(windows, settings.percentile, settings.stability_percentage / 100):
                    break
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.terminate()
    last = windows[-STABLE_WINDOWS:]
    result = _merge(last)
    result.stable = _is_stable(windows, settings.percentile, settings.stability_percentage / 100)
    result.server = _stats_difference(snapshots[-1], snapshots[-1 - len(last)])
    result.cores = cores_busy(cpu[-1 - len(last)], cpu[-1], len(last) * interval)
    return result


def _wait_for_first(records: mp.Queue, received: list, workers: list, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not received:
        if not any(w.is_alive() for w in workers):
            raise SystemExit("perf: the load processes exited; is the server up and the model ready?")
        if time.monotonic() > deadline:
            raise SystemExit("perf: no response from the server within 60 s")
        _collect_until(records, received, time.monotonic() + 0.2)
    received.clear()  # warm-up: the first responses carry connection set-up


def _collect_until(records: mp.Queue, received: list, end: float) -> None:
    while (left := end - time.monotonic()) > 0 or not records.empty():
        try:
            received.extend(records.get(timeout=max(0.01, left)))
        except queue.Empty:
            if left <= 0:
                return
    # Responses that finished before ``end`` may still be in flight through the queue.
    time.sleep(0.06)
    while not records.empty():
        received.extend(records.get_nowait())


LOAD_GENERATOR = "load generator"


def cpu_seconds(pids: Sequence[int]) -> float | None:
    """User and system CPU time so far of the processes ``pids`` (Linux; None elsewhere)."""
    total = 0
    try:
        for pid in pids:
            # The fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None
    return total / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(groups: dict[str, list[int]]) -> dict[str, float]:
    return {name: seconds for name, pids in groups.items() if (seconds := cpu_seconds(pids)) is not None}


def cores_busy(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """Cores each group kept busy between two snapshots ``seconds`` apart."""
    return {name: (after[name] - before[name]) / seconds for name in after if name in before}


def prometheus_counter(metrics_url: str, name: str, **labels: str) -> float:
    """Sum of the samples of counter ``name`` whose labels include ``labels``, from Triton's metrics endpoint."""
    text = urllib.request.urlopen(f"http://{metrics_url}/metrics", timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


# --- Reporting it ----------------------------------------------------------------------------


def print_level(result: LevelResult, settings: Settings) -> None:
    print(f"Request concurrency: {result.concurrency}")
    print("  Client: ")
    print(f"    Request count: {result.requests}" + (f" ({result.failures} failed)" if result.failures else ""))
    print(f"    Throughput: {result.throughput:.2f} infer/sec")
    for p in (50, 90, 95, 99):
        print(f"    p{p} latency: {result.latency_us[f'p{p}']:.0f} usec")
    print(f"    Avg gRPC time: {result.latency_us['avg']:.0f} usec")
    for name, s in result.server.items():
        title = "  Server: " if name == settings.model else f"  Composing model {name}: "
        print(title)
        print(f"    Inference count: {s.inference_count}")
        print(f"    Execution count: {s.execution_count}")
        print(f"    Successful request count: {s.success_count}")
        print(f"    Images per execution: {s.images_per_execution:.2f}")
        overhead = max(0.0, s.request_us - s.queue_us - s.compute_input_us - s.compute_infer_us - s.compute_output_us)
        print(f"    Avg request latency: {s.request_us:.0f} usec (overhead {overhead:.0f} usec + queue {s.queue_us:.0f} usec"
              f" + compute input {s.compute_input_us:.0f} usec + compute infer {s.compute_infer_us:.0f} usec"
              f" + compute output {s.compute_output_us:.0f} usec)")
    if result.cores:
        busy = ", ".join(f"{name} {cores:.2f}" for name, cores in result.cores.items())
        print(f"  CPU: {busy} cores busy, of {len(os.sched_getaffinity(0))} here")
    if not result.stable:
        print(f"  Warning: not stable within {settings.stability_percentage:.0f}% after {settings.max_trials} windows")
    print(flush=True)


def summary_lines(results: Sequence[LevelResult], percentile: int | None) -> list[str]:
    label = f"p{percentile}" if percentile else "Avg"
    lines = [f"Inferences/Second vs. Client {label} Batch Latency"]
    lines += [f"Concurrency: {r.concurrency}, throughput: {r.throughput:.2f} infer/sec, latency {r.latency(percentile):.0f} usec"
              for r in results]
    return lines


CSV_HEADER = ["Concurrency", "Inferences/Second", "Server Queue", "Server Compute Input", "Server Compute Infer",
              "Server Compute Output", "p50 latency", "p90 latency", "p95 latency", "p99 latency", "Avg latency",
              "Images/Execution", "Failures", "Stable"]


def write_csv(path: Path, results: Sequence[LevelResult], model: str) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_HEADER)
        for r in results:
            s = r.server.get(model, ServerStats())
            lat = r.latency_us
            writer.writerow([r.concurrency, f"{r.throughput:.2f}", round(s.queue_us), round(s.compute_input_us),
                             round(s.compute_infer_us), round(s.compute_output_us), round(lat["p50"]), round(lat["p90"]),
                             round(lat["p95"]), round(lat["p99"]), round(lat["avg"]), f"{s.images_per_execution:.2f}",
                             r.failures, r.stable])


def run(settings: Settings) -> list[LevelResult]:
    """Measure every concurrency level; print as perf_analyzer does when ``settings.verbose``."""
    generated = settings.input_data not in ("random", "zero")  # the data brings its own shapes
    specs, max_batch = model_inputs(settings.url, settings.model, settings.shapes, need_shapes=not generated)
    if settings.batch_size > max(1, max_batch):
        raise SystemExit(f"perf: -b {settings.batch_size} is more than {settings.model}'s max_batch_size {max_batch}")
    requests = make_requests(specs, settings.batch_size, settings.input_data, max_batch)
    if settings.verbose:
        stabilise = f"p{settings.percentile} latency" if settings.percentile else "average latency"
        print("*** Measurement Settings ***")
        print(f"  Batch size: {settings.batch_size}")
        print("  Service Kind: Triton (gRPC)")
        print("  Using \"time_windows\" mode for stabilization")
        print(f"  Measurement window: {settings.measurement_interval_ms} msec")
        print(f"  Using asynchronous calls for inference, from {settings.processes} process(es)")
        print(f"  Stabilizing using {stabilise} and throughput\n", flush=True)
    results = []
    for concurrency in settings.levels:
        result = measure_level(settings, requests, concurrency)
        results.append(result)
        if settings.verbose:
            print_level(result, settings)
    if settings.verbose:
        print("\n".join(summary_lines(results, settings.percentile)), flush=True)
    return results


def parse_concurrency_range(text: str) -> tuple[int, int, int]:
    """``start:end[:step]`` (perf_analyzer's form) -> (start, end, step)."""
    try:
        start, end, *step = (int(v) for v in text.split(":"))
        return start, end, step[0] if step else 1
    except ValueError:
        raise ValueError(f"--concurrency-range takes start:end[:step] (got {text!r})") from None


def parse_args(argv: Sequence[str] | None = None) -> tuple[Settings, Path | None]:
    parser = argparse.ArgumentParser(prog="python -m client.perf", description=__doc__.split("\n\n")[0])
    parser.add_argument("-m", "--model-name", required=True)
    parser.add_argument("-b", "--batch-size", type=int, default=1)
    parser.add_argument("--shape", action="append", type=parse_shape, default=[], help="NAME:D1,D2,... without the batch dimension")
    parser.add_argument("--concurrency-range", default="1:1:1", help="start:end:step (default %(default)s)")
    parser.add_argument("--percentile", type=int, choices=range(1, 100), metavar="P", help="stabilise and report the Pth latency percentile (default: average)")
    parser.add_argument("-p", "--measurement-interval", type=int, default=5000, help="window length, ms (default %(default)s)")
    parser.add_argument("-s", "--stability-percentage", type=float, default=10.0, help="(default %(default)s)")
    parser.add_argument("-r", "--max-trials", type=int, default=10, help="windows before giving up on stability (default %(default)s)")
    parser.add_argument("-u", "--url", default="localhost:8001", help="gRPC endpoint (default %(default)s)")
    parser.add_argument("-i", "--protocol", default="grpc", choices=["grpc"], help="only gRPC is supported")
    parser.add_argument("-f", "--latency-report-file", type=Path, help="write a CSV of the results here")
    parser.add_argument("--input-data", default="random",
                        help="random | zero | text-lines (generated text at natural widths, for ragged batching) | a perf_analyzer JSON file")
    parser.add_argument("--processes", type=int, default=1, help="load processes sharing the concurrency (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        concurrency = parse_concurrency_range(args.concurrency_range)
    except ValueError as error:
        parser.error(str(error))
    settings = Settings(args.model_name, args.url, args.batch_size, dict(args.shape), concurrency,
                        args.percentile, args.measurement_interval, args.stability_percentage, args.max_trials,
                        args.input_data, max(1, args.processes))
    return settings, args.latency_report_file


def main(argv: Sequence[str] | None = None) -> int:
    settings, csv_path = parse_args(argv)
    results = run(settings)
    if csv_path:
        write_csv(csv_path, results, settings.model)
    return 0 if all(r.requests for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

