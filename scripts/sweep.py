"""Benchmark every text_recognition configuration on this machine, and name the one to deploy.

    make bench                                    # everything, results under bench/<machine>/
    .venv/bin/python scripts/sweep.py --variants tutorial --output-channels 512 --checkpoint none

For each configuration it starts the real server and runs the tutorial's measurement
(``-b 2 --shape input.1:1,32,100 --concurrency-range 2:16:2 --percentile=95``); it times the model
alone in-process at batch sizes 1 to 64 as the reference; it measures a mix of text-line widths with
and without ragged batching; and it writes a CSV, JSON, a markdown table and a plot, and which
configuration serves the most within each p95 latency budget.

Besides the tutorial's variants and our ``config.pbtxt``, it measures candidates for the recommended
configuration (batch size, instances, queue delay, memory layout) derived from the model-alone timings.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import platform
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch
from google.protobuf import text_format
from tqdm import tqdm
from tritonclient.grpc import model_config_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from client.perf import LOAD_GENERATOR, LevelResult, Settings, parse_concurrency_range, prometheus_counter, run, summary_lines  # noqa: E402
from scripts.serve import DEFAULT_REPOSITORY, ServerProcess, read_model_config  # noqa: E402
from str_ocr import load_model  # noqa: E402
from str_ocr.benchmark import images_per_second  # noqa: E402
from str_ocr.serving import ServingSettings  # noqa: E402

MODEL = "text_recognition"
TRITONSERVER, INSTANCES = "tritonserver", "model instances"
CPU_GROUPS = [LOAD_GENERATOR, TRITONSERVER, INSTANCES]  # where the CPU time goes while the server is measured
TUTORIAL_VARIANTS = ["no_batching", "dynamic_batching", "dynamic_batching_2_instances", "queue_delay_100us"]
RECOMMENDED = "recommended"
P95_BUDGETS_MS = [10, 25, 50, 100, 250]
MIX_VARIANTS = ["ragged_batching", "dynamic_batching", "no_batching"]
# The tutorial's A100 figures (ONNX Runtime backend, -b 2, concurrency 16): throughput, p95 latency in us.
TUTORIAL_A100 = {"no_batching": (975.048, 34035), "dynamic_batching": (3187.76, 10567),
                 "dynamic_batching_2_instances": (4134.09, 8244)}


# --- Configurations --------------------------------------------------------------------------


def _set_parameter(config: model_config_pb2.ModelConfig, key: str, value: str | None) -> None:
    if value is None:
        config.parameters.pop(key, None)
    else:
        config.parameters[key].string_value = value


def candidates(base: model_config_pb2.ModelConfig) -> dict[str, model_config_pb2.ModelConfig]:
    """Variations of the recommended config along the knobs the model-alone timings point at."""
    grid = {
        "mbs16_2x_nhwc": (16, 2, 0, True),
        "mbs32_2x_nhwc": (32, 2, 0, True),
        "mbs32_1x_nhwc": (32, 1, 0, True),
        "mbs32_2x_nchw": (32, 2, 0, False),
        "mbs64_2x_nhwc": (64, 2, 0, True),
        "mbs32_2x_nhwc_delay1ms": (32, 2, 1000, True),
    }
    result = {}
    for name, (max_batch, instances, delay_us, nhwc) in grid.items():
        config = model_config_pb2.ModelConfig()
        config.CopyFrom(base)
        config.max_batch_size = max_batch
        config.instance_group[0].count = instances
        config.dynamic_batching.max_queue_delay_microseconds = delay_us
        _set_parameter(config, "channels_last", "true" if nhwc else "false")
        result[name] = config
    return result


def build_repository(root: Path, variants: dict[str, model_config_pb2.ModelConfig], checkpoint: str | None,
                     output_channels: int | None) -> Path:
    """A model repository holding text_recognition with every variant under configs/ (weights overridden)."""
    source = DEFAULT_REPOSITORY / MODEL
    target = root / MODEL
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("configs", "__pycache__", "*.onnx"))
    (target / "configs").mkdir()
    for name, config in variants.items():
        if checkpoint is not None:
            _set_parameter(config, "checkpoint", None if checkpoint == "none" else str(Path(checkpoint).resolve()))
        if output_channels is not None:
            _set_parameter(config, "output_channels", str(output_channels))
        (target / "configs" / f"{name}.pbtxt").write_text(text_format.MessageToString(config))
    return root


def selected_variants(which: str) -> dict[str, model_config_pb2.ModelConfig]:
    model_dir = DEFAULT_REPOSITORY / MODEL
    variants = {name: read_model_config(model_dir, name) for name in TUTORIAL_VARIANTS}
    variants[RECOMMENDED] = read_model_config(model_dir)
    if which in ("all", "candidates"):
        variants |= candidates(variants[RECOMMENDED])
    if which not in ("all", "tutorial", "candidates"):
        names = which.split(",")
        everything = variants | candidates(variants[RECOMMENDED])
        if unknown := [n for n in names if n not in everything]:
            raise SystemExit(f"sweep: no configuration named {', '.join(unknown)}; known: {', '.join(everything)}")
        variants = {n: everything[n] for n in names}
    return variants


# --- Measuring -------------------------------------------------------------------------------


def model_alone(config: model_config_pb2.ModelConfig, batches: list[int], seconds: float, checkpoint: str | None,
                output_channels: int | None) -> list[dict]:
    """Images per second of the recogniser in-process, per batch size and memory layout."""
    settings = ServingSettings.from_parameters({k: v.string_value for k, v in config.parameters.items()},
                                               DEFAULT_REPOSITORY / MODEL / "1")
    path = settings.checkpoint if checkpoint is None else (None if checkpoint == "none" else Path(checkpoint))
    channels = output_channels or settings.output_channels
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = []
    for nhwc in (False, True):
        for batch in tqdm(batches, desc=f"model alone ({'NHWC' if nhwc else 'NCHW'})", leave=False):
            ips = images_per_second(load_model(path, channels), batch, seconds=seconds, device=device, channels_last=nhwc)
            rows.append({"batch_size": batch, "layout": "NHWC" if nhwc else "NCHW", "images_per_second": ips})
    return rows


def measure(repository: Path, name: str, settings: Settings, log_dir: Path) -> list[LevelResult]:
    with ServerProcess(config_name=name, models=[MODEL], repository=repository, log_path=log_dir / f"{name}.log") as server:
        settings.url = server.grpc_url
        settings.watch = {TRITONSERVER: server.triton_pids(), INSTANCES: server.stub_pids(MODEL)}
        return run(settings)


def ragged_mix(repository: Path, names: list[str], args: argparse.Namespace, log_dir: Path) -> list[dict]:
    """Generated text lines of natural widths (about 25 to 550 px), one per request, concurrency 16."""
    rows = []
    for name in tqdm(names, desc="width mix", leave=False):
        with ServerProcess(config_name=name, models=[MODEL], repository=repository,
                           log_path=log_dir / f"{name}-mix.log") as server:
            settings = Settings(MODEL, server.grpc_url, 1, {}, (16, 16, 1), 95, args.measurement_interval,
                                input_data="text-lines", processes=args.processes, verbose=False)
            (result,) = run(settings)
            real = prometheus_counter(server.metrics_url, "str_ocr_columns_total", kind="real")
            padding = prometheus_counter(server.metrics_url, "str_ocr_columns_total", kind="padding")
        stats = result.server[MODEL]
        rows.append({"variant": name, "lines_per_second": result.throughput, "p95_us": result.latency(95),
                     "images_per_execution": stats.images_per_execution,
                     "padding_waste": padding / (real + padding) if real + padding else 0.0})
    return rows


# --- Reporting -------------------------------------------------------------------------------


def recommendations(results: dict[str, list[LevelResult]], budgets_ms: list[float]) -> list[dict]:
    picks = []
    for budget in budgets_ms:
        points = [(r.throughput, name, r) for name, levels in results.items() for r in levels if r.latency(95) <= budget * 1e3]
        if points:
            throughput, name, r = max(points, key=lambda p: p[0])
            picks.append({"p95_budget_ms": budget, "variant": name, "concurrency": r.concurrency,
                          "throughput": throughput, "p95_us": r.latency(95)})
        else:
            picks.append({"p95_budget_ms": budget, "variant": None})
    return picks


def markdown(machine: dict, alone: list[dict], results: dict[str, list[LevelResult]], mix: list[dict],
             picks: list[dict]) -> str:
    best = max(alone, key=lambda r: r["images_per_second"])
    at8 = {r["layout"]: r["images_per_second"] for r in alone if r["batch_size"] == 8}
    at_top = {name: max(levels, key=lambda level: level.concurrency) for name, levels in results.items()}
    top = max(r.concurrency for r in at_top.values())
    lines = [f"# text_recognition on {machine['name']}", "",
             f"{machine['description']}; {machine['date']}. Measurement: `{machine['measurement']}`, "
             f"{machine['output_channels']}-channel recogniser.", "",
             f"## Served, at concurrency {top}", "",
             "| configuration | throughput (infer/s) | p95 latency (us) | images / execution | vs model alone at batch 8 (NCHW) | vs model alone at its best |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in at_top.items():
        stats = r.server.get(MODEL)
        lines.append(f"| {name} | {r.throughput:,.0f} | {r.latency(95):,.0f} | {stats.images_per_execution if stats else 0:.2f} | "
                     f"{r.throughput / at8['NCHW']:.2f} | {r.throughput / best['images_per_second']:.2f} |")
    lines += cores_table(machine, at_top, top)
    lines += ["", "## The model alone, in-process (images/s)", "", "| batch | NCHW | NHWC |", "| ---: | ---: | ---: |"]
    for batch in sorted({r["batch_size"] for r in alone}):
        row = {r["layout"]: r["images_per_second"] for r in alone if r["batch_size"] == batch}
        lines.append(f"| {batch} | {row['NCHW']:,.0f} | {row['NHWC']:,.0f} |")
    lines += ["", f"Best: {best['images_per_second']:,.0f} images/s at batch {best['batch_size']} ({best['layout']}).", ""]
    if mix:
        lines += ["## A mix of text-line widths (one line per request, concurrency 16)", "",
                  "| configuration | lines/s | p95 latency (us) | lines / execution | padding (share of columns) |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {m['variant']} | {m['lines_per_second']:,.0f} | {m['p95_us']:,.0f} | {m['images_per_execution']:.2f} | "
                  f"{m['padding_waste']:.1%} |" for m in mix]
        lines.append("")
    lines += ["## What to deploy", "", "| p95 budget | configuration | at concurrency | throughput (infer/s) | p95 (us) |",
              "| ---: | --- | ---: | ---: | ---: |"]
    for p in picks:
        if p["variant"]:
            lines.append(f"| {p['p95_budget_ms']} ms | {p['variant']} | {p['concurrency']} | {p['throughput']:,.0f} | {p['p95_us']:,.0f} |")
        else:
            lines.append(f"| {p['p95_budget_ms']} ms | none measured within it | | | |")
    lines += ["", "![throughput and p95 latency against concurrency](sweep.png)", ""]
    return "\n".join(lines)




def cores_table(machine: dict, rows: dict[str, LevelResult], top: int) -> list[str]:
    """Where the machine's cores went at the top concurrency (``rows``: each variant's level there)."""
    if not any(r.cores for r in rows.values()):
        return []
    lines = ["", f"### Where the {machine['cores']} cores went, at concurrency {top}", "",
             "The load generator shares the machine with the server; what it and `tritonserver` keep busy is not "
             "left for the model instances.", "",
             "| configuration | " + " | ".join(CPU_GROUPS) + " | idle or other work | images/s per instance core |",
             "| --- |" + " ---: |" * (len(CPU_GROUPS) + 2)]
    for name, r in rows.items():
        busy = [r.cores.get(group, 0.0) for group in CPU_GROUPS]
        per_core = r.throughput / busy[-1] if busy[-1] else 0.0
        lines.append(f"| {name} | " + " | ".join(f"{b:.2f}" for b in busy) +
                     f" | {max(0.0, machine['cores'] - sum(busy)):.2f} | {per_core:,.0f} |")
    return lines


def plot(path: Path, results: dict[str, list[LevelResult]], alone: list[dict], title: str) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 6))
    colours = plt.get_cmap("tab20").colors
    for index, (name, levels) in enumerate(results.items()):
        x = [r.concurrency for r in levels]
        style = {"color": colours[index % len(colours)], "marker": "o",
                 "linestyle": "-" if name in TUTORIAL_VARIANTS or name == RECOMMENDED else "--",
                 "linewidth": 3 if name == RECOMMENDED else 1.5}
        left.plot(x, [r.throughput for r in levels], label=name, **style)
        right.plot(x, [r.latency(95) / 1e3 for r in levels], **style)
    best = max(alone, key=lambda r: r["images_per_second"])
    at8 = next(r for r in alone if r["batch_size"] == 8 and r["layout"] == "NCHW")
    left.axhline(best["images_per_second"], color="black", linestyle="--",
                 label=f"model alone, batch {best['batch_size']} {best['layout']}")
    left.axhline(at8["images_per_second"], color="grey", linestyle=":", label="model alone, batch 8 NCHW")
    left.set(xlabel="concurrency (requests in flight)", ylabel="throughput (infer/s)", title="Throughput")
    right.set(xlabel="concurrency (requests in flight)", ylabel="p95 latency (ms)", title="p95 latency")
    figure.legend(*left.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8, frameon=False)
    figure.suptitle(title + " (dashed: candidates for the recommended config)")
    figure.tight_layout(rect=(0, 0.14, 1, 1))
    figure.savefig(path, dpi=110)


def machine_info(output_channels: int) -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    cores = len(__import__("os").sched_getaffinity(0))
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    name = f"{gpu.replace(' ', '-')}" if gpu else f"cpu-{cores}-cores"
    description = f"{gpu}, {cores} CPU cores ({cpu})" if gpu else f"{cores} CPU cores ({cpu}), no GPU"
    return {"name": name.lower(), "description": description, "cpu": cpu, "cores": cores, "gpu": gpu,
            "torch": torch.__version__, "date": dt.date.today().isoformat(), "output_channels": output_channels}


def write_results(out: Path, machine: dict, alone, results, mix, picks) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "machine.json").write_text(json.dumps(machine, indent=2))
    serialised = {name: [asdict(r) for r in levels] for name, levels in results.items()}
    (out / "sweep.json").write_text(json.dumps({"machine": machine, "model_alone": alone, "served": serialised,
                                                "width_mix": mix, "recommendations": picks}, indent=2))
    with (out / "sweep.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["variant", "concurrency", "throughput_infer_per_s", "p50_us", "p95_us", "p99_us",
                         "images_per_execution", "queue_us", "compute_infer_us", "stable",
                         *(f"cores_{g.replace(' ', '_')}" for g in CPU_GROUPS)])
        for name, levels in results.items():
            for r in levels:
                s = r.server.get(MODEL)
                writer.writerow([name, r.concurrency, f"{r.throughput:.1f}", round(r.latency_us["p50"]), round(r.latency(95)),
                                 round(r.latency_us["p99"]), f"{s.images_per_execution:.2f}" if s else "",
                                 round(s.queue_us) if s else "", round(s.compute_infer_us) if s else "", r.stable,
                                 *(f"{r.cores[g]:.2f}" if g in r.cores else "" for g in CPU_GROUPS)])
    (out / "README.md").write_text(markdown(machine, alone, results, mix, picks))
    plot(out / "sweep.png", results, alone, f"text_recognition on {machine['description']}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="all", help="all | tutorial | candidates | name,name (default %(default)s)")
    parser.add_argument("--concurrency-range", default="2:16:2")
    parser.add_argument("-b", "--batch-size", type=int, default=2)
    parser.add_argument("--measurement-interval", type=int, default=2000, help="ms per window (default %(default)s)")
    parser.add_argument("--alone-batches", default="1,2,4,8,16,32,64")
    parser.add_argument("--alone-seconds", type=float, default=2.0)
    parser.add_argument("--checkpoint", help="weights for every variant ('none': random initialisation)")
    parser.add_argument("--output-channels", type=int, help="recogniser width for every variant")
    parser.add_argument("--no-width-mix", action="store_true", help="skip the mixed-width measurement")
    parser.add_argument("--processes", type=int, default=1, help="load processes (more on many-core machines)")
    parser.add_argument("--out", type=Path, help="results folder (default bench/<machine>)")
    args = parser.parse_args(argv)
    if "8" not in args.alone_batches.split(","):
        parser.error("--alone-batches must include 8: the served throughput is compared with the model alone at batch 8")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    variants = selected_variants(args.variants)
    concurrency = parse_concurrency_range(args.concurrency_range)
    recommended = variants.get(RECOMMENDED) or read_model_config(DEFAULT_REPOSITORY / MODEL)
    channels = args.output_channels or int(recommended.parameters["output_channels"].string_value)
    machine = machine_info(channels)
    machine["measurement"] = (f"-b {args.batch_size} --shape input.1:1,32,100 --concurrency-range "
                              f"{args.concurrency_range} --percentile=95 --measurement-interval {args.measurement_interval}")
    out = args.out or Path("bench") / machine["name"]
    print(f"sweep: {len(variants)} configurations on {machine['description']}; results in {out}/", flush=True)
    alone = model_alone(recommended, [int(b) for b in args.alone_batches.split(",")], args.alone_seconds,
                        args.checkpoint, args.output_channels)
    results: dict[str, list[LevelResult]] = {}
    mix: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        everything = dict(variants)
        if not args.no_width_mix:
            everything |= {n: read_model_config(DEFAULT_REPOSITORY / MODEL, n) for n in MIX_VARIANTS if n not in everything}
        repository = build_repository(Path(tmp), everything, args.checkpoint, args.output_channels)
        logs = Path("runs") / "sweep-logs"  # the servers' logs, kept out of the committed results
        logs.mkdir(parents=True, exist_ok=True)
        for name in tqdm(list(variants), desc="configurations"):
            settings = Settings(MODEL, batch_size=args.batch_size, shapes={"input.1": (1, 32, 100)},
                                concurrency=concurrency, percentile=95,
                                measurement_interval_ms=args.measurement_interval, processes=args.processes, verbose=False)
            results[name] = measure(repository, name, settings, logs)
            tqdm.write(f"{name}: " + "; ".join(summary_lines(results[name], 95)[1:][-1:]))
            write_results(out, machine, alone, results, mix, recommendations(results, P95_BUDGETS_MS))  # so far
        if not args.no_width_mix:
            mix = ragged_mix(repository, MIX_VARIANTS, args, logs)
    picks = recommendations(results, P95_BUDGETS_MS)
    write_results(out, machine, alone, results, mix, picks)
    print((out / "README.md").read_text())
    return {"model_alone": alone, "served": results, "width_mix": mix, "recommendations": picks}


if __name__ == "__main__":
    main()
