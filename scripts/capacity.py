"""How many replicas of which config hold a load at a p95, and a simulated day under the HPA's rule.

    .venv/bin/python scripts/capacity.py --rps 2000 --p95-ms 50 [--bench bench/cpu-2-cores]
    .venv/bin/python scripts/capacity.py --measure-start 3     # time the local server's start, for the day
    .venv/bin/python scripts/capacity.py --pages --rps 20 --p95-ms 2000  # whole images to ocr_page

RPS counts requests like the benchmark's (its ``-b``: 2 lines of 32x100 each); with --pages, pages sent to
ocr_page, from the page benchmark (``make bench-pages``, copied to BENCH/pages/pages.json). The logic is in
``str_ocr_capacity``; this file reads the inputs, prints the answer with its assumptions and writes the plots.
"""

from __future__ import annotations

import argparse
import sys
import json
import statistics
import time
from pathlib import Path

from str_ocr.contract import RECOGNIZER
from str_ocr_bench.configs import served_as
from str_ocr_capacity.curves import images_per_request, load_curves, load_page_curves
from str_ocr_capacity.hpa import HpaRule
from str_ocr_capacity.plots import plot_day, plot_plan
from str_ocr_capacity.queueing import ASSUMPTIONS, plan
from str_ocr_capacity.simulate import SPIKE, day_of_traffic, simulate, summarise
from str_ocr_server.process import ServerProcess
from str_ocr_triton.config import default_repository, read_model_config

ROOT = Path(__file__).resolve().parents[1]
HPA = ROOT / "deploy/kubernetes/base/hpa.yaml"
START_TIME = "start_time.json"


def queue_limit() -> int:
    """The served config's bound on queued requests (the image serves config.pbtxt)."""
    return read_model_config(default_repository() / RECOGNIZER).dynamic_batching.default_queue_policy.max_queue_size


def measure_start(bench: Path, runs: int) -> float:
    """Seconds from launching the local server (every model) to ready, ``runs`` times; saved beside the bench."""
    seconds = []
    for _ in range(runs):
        began = time.monotonic()
        with ServerProcess():
            seconds.append(round(time.monotonic() - began, 2))
    record = {"seconds": seconds, "median_s": statistics.median(seconds),
              "what": "python -m str_ocr_server, every model, from launch to /v2/health/ready "
                      "(image and weights local)"}
    (bench / START_TIME).write_text(json.dumps(record, indent=2) + "\n")
    print(f"start to ready: {seconds} s; median {record['median_s']} s -> {bench / START_TIME}")
    return record["median_s"]


def pod_start_s(bench: Path, args: argparse.Namespace) -> float:
    if args.pod_start_s is not None:
        return args.pod_start_s
    measured = bench / START_TIME
    if not measured.is_file():
        raise SystemExit(f"capacity: no {measured}: run with --measure-start 3 first, or give --pod-start-s")
    return json.loads(measured.read_text())["median_s"] + args.schedule_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rps", type=float, help="requests/s to hold (the day's peak)")
    parser.add_argument("--p95-ms", type=float, help="p95 latency budget, ms")
    parser.add_argument("--bench", type=Path, default=ROOT / "bench/cpu-2-cores", help="a bench/<machine> folder")
    parser.add_argument("--hpa", type=Path, default=HPA, help="the HPA manifest whose rule the day runs under")
    parser.add_argument("--simulate", help="config to simulate the day with (default: the one the image serves, "
                                           "'recommended' on the engine auto picks here, where the bench has it; "
                                           "else the plan's first)")
    parser.add_argument("--pod-start-s", type=float, help="pod start to ready, s (default: measured + --schedule-s)")
    parser.add_argument("--schedule-s", type=float, default=5.0,
                        help="added to the measured start: scheduling, container start, a probe period (default 5)")
    parser.add_argument("--measure-start", type=int, metavar="RUNS", help="time the local server's start first")
    parser.add_argument("--pages", action="store_true", help="size for whole images to ocr_page: RPS is pages/s")
    parser.add_argument("--out", type=Path, default=ROOT / "runs/capacity", help="where the plots go")
    args = parser.parse_args(argv)
    if args.measure_start:
        measure_start(args.bench, args.measure_start)
    if args.rps is None or args.p95_ms is None:
        return 0 if args.measure_start else parser.error("--rps and --p95-ms are needed")

    per_request = images_per_request(args.bench / "machine.json")
    if args.pages:
        curves = load_page_curves(args.bench / "pages" / "pages.json")
    else:
        curves = load_curves(args.bench / "sweep.csv", per_request)
    budget = args.p95_ms / 1e3
    plans = plan(curves, args.rps, budget)
    args.out.mkdir(parents=True, exist_ok=True)
    what = "pages" if args.pages else f"requests ({per_request} images each)"
    print(f"{args.rps:,.0f} {what}/s at p95 <= {args.p95_ms:g} ms, from {args.bench}:\n")
    print("| config | replicas | requests/s per replica | utilisation | planned p95 (ms) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for p in plans:
        print(f"| {p.variant} | {p.replicas} | {p.rate_per_replica:,.0f} | {p.utilisation:.0%} | {1e3 * p.p95_s:.1f} |")
    for name in sorted(curves.keys() - {p.variant for p in plans}):
        print(f"| {name} | none hold it | | | |")
    print(f"\nAssumptions:\n{ASSUMPTIONS}\n")
    plot_plan(curves, plans, args.rps, budget, args.out / "plan.png")
    if not plans:
        print("No config holds this p95 at any replica count.")
        return 1
    if args.pages:
        print("The day under the HPA is simulated for text_recognition's queue, which the HPA scales on; "
              "for pages, the plan above.")
        return 0
    variant = args.simulate or served_as(curves) or plans[0].variant
    rule = HpaRule.from_manifest(args.hpa)
    start = pod_start_s(args.bench, args)
    steps = simulate(curves[variant], rule, day_of_traffic(args.rps), start, queue_limit())
    day = summarise(steps, budget)
    hpa = args.hpa.resolve()
    shown = hpa.relative_to(ROOT) if hpa.is_relative_to(ROOT) else hpa
    print(f"A day under {shown} ({variant}; peak {args.rps:,.0f} requests/s, {SPIKE[2]}x for "
          f"{(SPIKE[1] - SPIKE[0]) * 60:.0f} min at {SPIKE[0]:g}h; pods ready {start:.1f} s after they are asked for; "
          f"replicas {rule.min_replicas} to {rule.max_replicas}):")
    print(f"  {day.replica_hours:,.0f} replica-hours, at most {day.max_replicas} replicas; "
          f"{day.refused:,.0f} of {day.requests:,.0f} requests refused ({day.refused_share:.3%}); "
          f"p95 over budget for {day.seconds_over_p95 / 60:.0f} min")
    plot_day(steps, variant, budget, curves[variant].capacity, args.out / "day.png")
    print(f"\nPlots: {args.out / 'plan.png'}, {args.out / 'day.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
