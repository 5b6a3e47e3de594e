"""The sweep's results as files: a CSV and JSON of every level, a markdown table, a plot, and what to deploy."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from str_ocr.contract import TUTORIAL_VARIANTS
from str_ocr.plotting import pyplot

from .alone import cheapest, fastest
from .configs import RECOMMENDED, base_variant
from .sweep import Level

P95_BUDGETS_MS = [10, 25, 50, 100, 250]
# The tutorial's A100 figures (ONNX Runtime backend, -b 2, concurrency 16): throughput, p95 latency in us.
TUTORIAL_A100 = {"no_batching": (975.048, 34035), "dynamic_batching": (3187.76, 10567),
                 "dynamic_batching_2_instances": (4134.09, 8244)}
Results = dict[str, list[Level]]


def machine_info(output_channels: int) -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    cores = len(os.sched_getaffinity(0))
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    name = gpu.replace(" ", "-") if gpu else f"cpu-{cores}-cores"
    description = f"{gpu}, {cores} CPU cores ({cpu})" if gpu else f"{cores} CPU cores ({cpu}), no GPU"
    return {"name": name.lower(), "description": description, "cpu": cpu, "cores": cores, "gpu": gpu,
            "torch": torch.__version__, "date": dt.date.today().isoformat(), "output_channels": output_channels}


def efficiency(level: Level, alone: Sequence[dict]) -> float:
    """The model alone's least CPU time per image over the server's: 1.0 would be serving for free."""
    spent = level.server_cpu_seconds_per_image
    return cheapest(alone)["cpu_seconds_per_image"] / spent if spent else 0.0


def top_levels(results: Results) -> dict[str, Level]:
    """Each variant's highest measured concurrency."""
    return {name: max((lv for lv in levels if lv.measured), key=lambda lv: lv.measured.concurrency)
            for name, levels in results.items() if any(lv.measured for lv in levels)}


def recommendations(results: Results) -> list[dict]:
    picks = []
    for budget in P95_BUDGETS_MS:
        points = [lv for levels in results.values() for lv in levels
                  if lv.measured and lv.measured.p95_us <= budget * 1e3]
        best = max(points, key=lambda lv: lv.measured.throughput, default=None)
        picks.append({"p95_budget_ms": budget, "variant": best.variant if best else None,
                      "concurrency": best.measured.concurrency if best else None,
                      "throughput": best.measured.throughput if best else None,
                      "p95_us": best.measured.p95_us if best else None})
    return picks


def served_table(results: Results, alone: Sequence[dict]) -> list[str]:
    top = top_levels(results)
    lines = ["| configuration | throughput (infer/s) | p95 latency (ms) | images / execution | server CPU ms / image "
             "(tritonserver + instances) | serving efficiency | vs model alone's best throughput | "
             "tutorial, A100 (infer/s, p95 ms) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, lv in top.items():
        m, tutorial = lv.measured, TUTORIAL_A100.get(name)
        reference = f"{tutorial[0]:,.0f}, {tutorial[1] / 1e3:.1f}" if tutorial else ""
        lines.append(f"| {name} | {m.throughput:,.0f} | {m.p95_us / 1e3:.1f} | {lv.images_per_execution:.2f} | "
                     f"{lv.server_cpu_seconds_per_image * 1e3:.3f} "
                     f"({lv.tritonserver_cpu_seconds_per_image * 1e3:.3f} + "
                     f"{lv.instances_cpu_seconds_per_image * 1e3:.3f}) | {efficiency(lv, alone):.2f} | "
                     f"{m.throughput / fastest(alone)['images_per_second']:.2f} | {reference} |")
    if {"no_batching", "dynamic_batching"} <= top.keys():
        ratio = top["dynamic_batching"].measured.throughput / top["no_batching"].measured.throughput
        lines += ["", f"Dynamic batching serves {ratio:.2f}x the throughput of no batching "
                      "(the tutorial's A100: 3.27x)."]
    return lines


def alone_table(alone: Sequence[dict]) -> list[str]:
    lines = ["| threads | engine | "
             + " | ".join(f"batch {b}" for b in sorted({r["batch_size"] for r in alone})) + " |",
             "| ---: | --- |" + " ---: |" * len({r["batch_size"] for r in alone})]
    for threads, engine in sorted({(r["threads"], r["engine"]) for r in alone}):
        cells = [f"{r['images_per_second']:,.0f} ({r['cpu_seconds_per_image'] * 1e3:.3f})"
                 for r in sorted(alone, key=lambda r: r["batch_size"])
                 if (r["threads"], r["engine"]) == (threads, engine)]
        lines.append(f"| {threads} | {engine} | " + " | ".join(cells) + " |")
    best, least = fastest(alone), cheapest(alone)
    return lines + ["", f"Fastest: {best['images_per_second']:,.0f} images/s (batch {best['batch_size']}, "
                        f"{best['threads']} threads, {best['engine']}). Least CPU per image: "
                        f"{least['cpu_seconds_per_image'] * 1e3:.3f} ms "
                        f"(batch {least['batch_size']}, {least['threads']} threads, {least['engine']}): the reference "
                        "for serving efficiency."]


def markdown(machine: dict, alone: Sequence[dict], results: Results, mix: Sequence[dict], picks: Sequence[dict]) -> str:
    lines = [f"# text_recognition on {machine['name']}", "",
             f"{machine['description']}; {machine['date']}; {machine['output_channels']}-channel recogniser. Every "
             "served figure is NVIDIA's perf_analyzer (`perf_analyzer/*.csv`, one row per level): "
             f"`{machine['measurement']}`.",
             "Server CPU is the CPU time of tritonserver and its stub processes (from /proc) per image Triton counted; "
             "serving efficiency is the model alone's least CPU time per image divided by it.", "",
             "## Served, at the highest concurrency", "", *served_table(results, alone), "",
             "## The model alone, in-process: images/s (CPU ms per image)", "", *alone_table(alone), ""]
    if mix:
        lines += ["## A mix of text-line widths (one line per request, concurrency 16)", "",
                  "| configuration | lines/s | p95 latency (ms) | lines / execution | padding (share of columns) |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {m['variant']} | {m['lines_per_second']:,.0f} | {m['p95_us'] / 1e3:.1f} | "
                  f"{m['images_per_execution']:.2f} | "
                  f"{m['padding_waste']:.1%} |" for m in mix]
        lines.append("")
    lines += ["## What to deploy", "",
              "| p95 budget | configuration | at concurrency | throughput (infer/s) | p95 (ms) |",
              "| ---: | --- | ---: | ---: | ---: |"]
    lines += [f"| {p['p95_budget_ms']} ms | {p['variant']} | {p['concurrency']} | {p['throughput']:,.0f} | "
              f"{p['p95_us'] / 1e3:.1f} |"
              if p["variant"] else f"| {p['p95_budget_ms']} ms | none measured within it | | | |" for p in picks]
    return "\n".join(lines + ["", "![throughput and p95 latency against concurrency](sweep.png)", ""])


def plot(path: Path, results: Results, alone: Sequence[dict], title: str) -> None:
    plt = pyplot()

    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 6))
    colours = plt.get_cmap("tab20").colors
    for index, (name, levels) in enumerate(results.items()):
        measured = [lv.measured for lv in levels if lv.measured]
        variant = base_variant(name)
        style = {"color": colours[index % len(colours)], "marker": "o",
                 "linestyle": "-" if variant in TUTORIAL_VARIANTS or variant == RECOMMENDED else "--",
                 "linewidth": 3 if variant == RECOMMENDED else 1.5}
        left.plot([m.concurrency for m in measured], [m.throughput for m in measured], label=name, **style)
        right.plot([m.concurrency for m in measured], [m.p95_us / 1e3 for m in measured], **style)
    best = fastest(alone)
    left.axhline(best["images_per_second"], color="black", linestyle="--",
                 label=f"model alone, batch {best['batch_size']} {best['engine']}, {best['threads']} threads")
    left.set(xlabel="concurrency (requests in flight)", ylabel="throughput (infer/s)",
             title="Throughput (perf_analyzer)")
    right.set(xlabel="concurrency (requests in flight)", ylabel="p95 latency (ms)", title="p95 latency (perf_analyzer)")
    figure.legend(*left.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8, frameon=False)
    figure.suptitle(title + " (dashed: candidates for the recommended config)")
    figure.tight_layout(rect=(0, 0.14, 1, 1))
    figure.savefig(path, dpi=110)


def write(out: Path, machine: dict, alone: Sequence[dict], results: Results, mix: Sequence[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    picks = recommendations(results)
    (out / "machine.json").write_text(json.dumps(machine, indent=2))
    served = {name: [asdict(lv) | {"server_cpu_seconds_per_image": lv.server_cpu_seconds_per_image} for lv in levels]
              for name, levels in results.items()}
    (out / "sweep.json").write_text(json.dumps({"machine": machine, "model_alone": list(alone), "served": served,
                                                "width_mix": list(mix), "recommendations": picks}, indent=2))
    with (out / "sweep.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["variant", "concurrency", "throughput_infer_per_s", "p50_us", "p95_us", "p99_us", "queue_us",
                         "compute_infer_us", "images_per_execution", "server_cpu_ms_per_image",
                         "tritonserver_cpu_ms_per_image", "instances_cpu_ms_per_image", "efficiency", "exit_code"])
        for levels in results.values():
            for lv in (lv for lv in levels if lv.measured):
                m = lv.measured
                writer.writerow([lv.variant, m.concurrency, f"{m.throughput:.1f}", round(m.p50_us), round(m.p95_us),
                                 round(m.p99_us), round(m.queue_us), round(m.compute_infer_us),
                                 f"{lv.images_per_execution:.2f}", f"{lv.server_cpu_seconds_per_image * 1e3:.4f}",
                                 f"{lv.tritonserver_cpu_seconds_per_image * 1e3:.4f}",
                                 f"{lv.instances_cpu_seconds_per_image * 1e3:.4f}", f"{efficiency(lv, alone):.3f}",
                                 lv.exit_code])
    (out / "README.md").write_text(markdown(machine, alone, results, mix, picks))
    plot(out / "sweep.png", results, alone, f"text_recognition on {machine['description']}")
