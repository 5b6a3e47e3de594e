"""How well whole images are read: the served ocr_page and RapidOCR on the same generated pages, in one run.

    .venv/bin/python scripts/evaluate_pages.py                        # 40 pages in the held-out faces
    .venv/bin/python scripts/evaluate_pages.py --fonts training --count 100
    .venv/bin/python scripts/evaluate_pages.py --url 127.0.0.1:8001  # a server already running ocr_page

Starts a server with ocr_page (unless --url), sends each page as its own request (--concurrency in flight),
runs RapidOCR in its own virtualenv (`make peers`) one page at a time on one thread, and prints each reader's
detection and end-to-end figures, over all pages, by background and by face (``str_ocr_bench.pages``). Writes
the table and the figures as JSON into --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from str_ocr.contract import OCR_PAGE
from str_ocr_bench.pages import evaluate, table, write_pages
from str_ocr_server.process import ServerProcess


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=40, help="pages (default %(default)s)")
    parser.add_argument("--seed", type=int, default=4, help="seed of the pages (default %(default)s)")
    parser.add_argument("--fonts", default="held-out", help="the declared font set the words are drawn in")
    parser.add_argument("--url", help="the gRPC address of a server running ocr_page (default: start one)")
    parser.add_argument("--config-name", help="the config variant the started server serves")
    parser.add_argument("--peers", default="rapidocr", help="peers to run beside it, comma-separated, or none")
    parser.add_argument("-c", "--concurrency", type=int, default=8, help="pages in flight to ocr_page")
    parser.add_argument("--out", type=Path, default=Path("runs/pages"), help="where pages and results go")
    args = parser.parse_args()
    peers = [] if args.peers == "none" else args.peers.split(",")
    pages = write_pages(args.out / f"{args.fonts}-{args.seed}", args.count, args.seed, args.fonts)
    if args.url:
        results = evaluate(args.url, pages, peers, args.concurrency)
    else:
        with ServerProcess(config_name=args.config_name, models=[OCR_PAGE]) as server:
            results = evaluate(server.grpc_url, pages, peers, args.concurrency)
    report = table(results)
    speeds = "\n".join(f"{name}: {r['pages_per_second']:.2f} pages/s, {r['errors']} errors"
                       for name, r in results.items())
    print(f"{report}\n\n{speeds}")
    out = args.out / f"{args.fonts}-{args.seed}.md"
    out.write_text(f"{report}\n\n{speeds}\n")
    summary = {name: {"pages_per_second": r["pages_per_second"], "errors": r["errors"],
                      **{group: vars(c) for group, c in r["counts"].items()}} for name, r in results.items()}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    print(f"evaluate_pages: written {out} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
