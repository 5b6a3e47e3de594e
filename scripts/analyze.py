"""Run NVIDIA's Model Analyzer on text_recognition (what `make analyze` does) and print its best configurations.

    make analyze                                  # its own virtualenv, then this
    .venv/bin/python scripts/analyze.py --model-analyzer .venv-analyzer/bin/model-analyzer [--out runs/analyzer]

A brute-force search with the local tritonserver, which Model Analyzer launches itself: instance counts 1 to
--max-instances, max batch sizes --min-batch-size to --max-batch-size, dynamic batching, concurrency
--min-concurrency to --max-concurrency (each doubling),
each measured with perf_analyzer at the tutorial's shape.
bench/cpu-2-cores/README.md ("Model Analyzer") compares its pick with make bench's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from str_ocr_bench.analyzer import best_rows, profile


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-analyzer", type=Path, default=Path(".venv-analyzer/bin/model-analyzer"))
    parser.add_argument("--out", type=Path, default=Path("runs/analyzer"), help="its results (default %(default)s)")
    # Model Analyzer doubles each from its minimum to its maximum; the defaults keep the search to a handful of
    # configs, about 25 minutes on 2 cores (every combination from 1 would take hours there).
    parser.add_argument("--min-batch-size", type=int, default=8)
    parser.add_argument("--max-batch-size", type=int, default=32)
    parser.add_argument("--max-instances", type=int, default=2)
    parser.add_argument("--min-concurrency", type=int, default=8)
    parser.add_argument("--max-concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    if not args.model_analyzer.exists():
        raise SystemExit(f"analyze: no {args.model_analyzer}: run `make analyze`, which installs it")
    args.out.mkdir(parents=True, exist_ok=True)
    results = profile(args.model_analyzer, args.out.resolve(), args.max_batch_size, args.max_instances,
                      args.max_concurrency, args.min_batch_size, args.min_concurrency)
    print(f"\nanalyze: Model Analyzer's five highest throughputs (all of them in {results}):")
    for row in best_rows(results):
        print("  " + ", ".join(f"{key}: {value}" for key, value in row.items() if value))


if __name__ == "__main__":
    main()
