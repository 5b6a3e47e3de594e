"""Whole images under load: ocr_page's ways of batching crops, and RapidOCR in-process, on the same pages.

    .venv/bin/python scripts/bench_pages.py                               # make bench-pages
    .venv/bin/python scripts/bench_pages.py --levels 1,8 --rounds 3 --pages 24 --requests 24

Draws --pages generated pages, starts one server per crop batching (ocr_page's config.pbtxt, grouped_crops,
padded_crops, unbatched_crops), runs perf_analyzer against each at every --levels concurrency, interleaved, --rounds
times (the median is reported), then RapidOCR (`make peers`) in-process with 1 and 2 threads. Writes pages.md,
pages.json and pages.png into --out, the pages and the servers' logs into --work (``str_ocr_bench.page_sweep``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from str_ocr_bench import perf_analyzer
from str_ocr_bench.page_sweep import VARIANTS, padded_waste, rapidocr_rates, report, sweep
from str_ocr_bench.pages import write_pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=16, help="generated pages sent in turn (default %(default)s)")
    parser.add_argument("--fonts", default="training", help="the declared font set the words are drawn in")
    parser.add_argument("--levels", default="1,2,4,8,16", help="concurrency levels (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=1, help="times each level is measured (default %(default)s)")
    parser.add_argument("--requests", type=int, default=16,
                        help="pages in each of perf_analyzer's measurement windows, at least (default %(default)s)")
    parser.add_argument("--stability", type=int, default=15, help="perf_analyzer's --stability-percentage")
    parser.add_argument("--batchings", default=",".join(VARIANTS), help="ways of sending crops (default %(default)s)")
    parser.add_argument("--peers", default="rapidocr", help="rapidocr, or none")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-pages"), help="where the results go")
    parser.add_argument("--work", type=Path, default=Path("runs/bench-pages"), help="where the pages and logs go")
    args = parser.parse_args()
    files = [path for path, _ in write_pages(args.work / "pages", args.pages, seed=8, fonts=args.fonts)]
    window = perf_analyzer.Window(stability_percent=args.stability)
    batchings = args.batchings.split(",")
    results, waste = sweep(files, [int(c) for c in args.levels.split(",")], args.work / "logs", window, args.rounds,
                           args.requests, batchings)
    if "padded" in batchings:
        waste["padded"] = padded_waste(files)
    rapidocr = rapidocr_rates(files) if args.peers == "rapidocr" else {}
    print(report(results, waste, rapidocr, args.out))
    print(f"bench_pages: written {args.out / 'pages.md'}, pages.json and pages.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
