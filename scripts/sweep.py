"""Benchmark every text_recognition configuration on this machine with NVIDIA's perf_analyzer, and name the
one to deploy.

    make bench                                     # everything, results under bench/<machine>/
    .venv/bin/python scripts/sweep.py --variants tutorial --output-channels 512 --checkpoint none

``str_ocr_bench.sweep`` says what is measured; the results are a CSV, JSON, perf_analyzer's own CSV files,
a markdown table with the serving efficiency, a plot, and the configuration that serves the most within
each p95 latency budget.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tqdm import tqdm

from str_ocr_bench import report
from str_ocr_bench.alone import model_alone
from str_ocr_bench.configs import build_repository, selected_variants, with_engines
from str_ocr_bench.perf_analyzer import Window
from str_ocr_bench.sweep import MIX_VARIANTS, measure_variant, width_mix
from str_ocr_triton.config import recognizer_settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="all",
                        help="all | tutorial | candidates | name,name (default %(default)s)")
    parser.add_argument("--concurrency-range", default="2:16:2",
                        help="START:END:STEP, as perf_analyzer's (default %(default)s)")
    parser.add_argument("-b", "--batch-size", type=int, default=2)
    parser.add_argument("--measurement-interval", type=int, default=3000,
                        help="ms per perf_analyzer window (default %(default)s)")
    parser.add_argument("--stability-percentage", type=int, default=10,
                        help="perf_analyzer's: how close its last three windows must be (default %(default)s)")
    parser.add_argument("--engines", default="auto",
                        help="engines to serve each configuration with, each ENGINE or ENGINE:PRECISION (f32 unless "
                             "named), e.g. torch,onnxruntime,openvino:f32,openvino:bf16: configurations are then named "
                             "VARIANT@ENGINE (default %(default)s: each as its config says)")
    parser.add_argument("--alone-batches", default="1,2,4,8,16,32,64")
    parser.add_argument("--alone-threads", default="1,2", help="torch threads to time the model alone with (CPU)")
    parser.add_argument("--alone-seconds", type=float, default=2.0)
    parser.add_argument("--checkpoint", help="weights for every variant ('none': random initialisation)")
    parser.add_argument("--output-channels", type=int, help="recogniser width for every variant")
    parser.add_argument("--no-width-mix", action="store_true", help="skip the mixed-width measurement")
    parser.add_argument("--out", type=Path, help="results folder (default bench/<machine>)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> Path:
    args = parse_args(argv)
    start, end, step = (int(x) for x in args.concurrency_range.split(":"))
    levels = list(range(start, end + 1, step))
    variants = with_engines(selected_variants(args.variants), args.engines.split(","))
    served = recognizer_settings()
    checkpoint = served.checkpoint if args.checkpoint is None else (None if args.checkpoint == "none"
                                                                    else Path(args.checkpoint))
    channels = args.output_channels or served.output_channels
    machine = report.machine_info(channels) | {"measurement": (
        f"perf_analyzer -m text_recognition -b {args.batch_size} --shape input.1:1,32,100 --concurrency-range C:C "
        f"--percentile=95 --measurement-interval {args.measurement_interval} --stability-percentage "
        f"{args.stability_percentage}, for C in {args.concurrency_range}")}
    out = args.out or Path("bench") / machine["name"]
    window = Window(args.measurement_interval, args.stability_percentage)
    print(f"sweep: {len(variants)} configurations on {machine['description']}; results in {out}/", flush=True)
    alone = model_alone(checkpoint, channels, [int(b) for b in args.alone_batches.split(",")],
                        [int(t) for t in args.alone_threads.split(",")], args.alone_seconds)
    results, mix = {}, []
    logs = Path("runs") / "sweep-logs"  # the servers' logs, kept out of the committed results
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        everything = variants | ({} if args.no_width_mix else selected_variants(",".join(MIX_VARIANTS)))
        repository = build_repository(Path(tmp), everything, args.checkpoint, args.output_channels)
        for name in tqdm(list(variants), desc="configurations"):
            results[name] = measure_variant(repository, name, levels, out, logs, args.batch_size, window)
            report.write(out, machine, alone, results, mix)  # what there is so far
        if not args.no_width_mix:
            mix = width_mix(repository, logs, window)
    report.write(out, machine, alone, results, mix)
    print((out / "README.md").read_text())
    return out


if __name__ == "__main__":
    main()
