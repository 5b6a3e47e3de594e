"""Read text from images with the served ``ocr`` ensemble, over asyncio gRPC.

    .venv/bin/python -m client.demo --url localhost:8001                # 32 generated lines, truth known
    .venv/bin/python -m client.demo --url localhost:8001 --images DIR  # every PNG/JPEG in DIR

Sends each image's bytes as one request with at most ``--concurrency`` in flight, prints what each one
says, its confidence and latency, and ends with throughput, p50/p95 latency and, where the true text is
known (generated lines, or files named ``<anything>_<text>.png``), the accuracy.

Exit status: 0 when every image was read, 1 when some failed, 2 when the server cannot be reached,
3 when the model is not there or not ready.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import tritonclient.grpc.aio as grpcaio
from tqdm import tqdm

from str_ocr.contract import DEFAULT_PORTS, OCR
from str_ocr_client.readiness import Readiness, model_readiness
from str_ocr_client.requests import image_inputs, text_of
from str_ocr_client.samples import Item, generated_images, images_from_folder
from str_ocr_client.sending import Outcome, infer_each

EXIT_FAILED, EXIT_UNREACHABLE, EXIT_NO_MODEL = 1, 2, 3


def format_answer(item: Item, outcome: Outcome) -> str:
    if not outcome.ok:
        return f"{item.name:24} ERROR {str(outcome.result).splitlines()[0]}"
    text, confidence = text_of(outcome.result)
    mark = "" if item.truth is None else ("  ok" if text == item.truth else f"  (truth {item.truth!r})")
    return f"{item.name:24} {text!r:28} confidence {confidence:.3f}  {outcome.seconds * 1e3:7.1f} ms{mark}"


def summary(items: Sequence[Item], outcomes: Sequence[Outcome], seconds: float) -> str:
    read = [(item, text_of(o.result)[0], o.seconds) for item, o in zip(items, outcomes) if o.ok]
    lines = [f"summary: {len(read)} of {len(items)} images read in {seconds:.2f} s: "
             f"throughput {len(read) / seconds:.1f} images/s"]
    if read:
        latencies = np.array([s for _, _, s in read]) * 1e3
        lines.append(f"summary: latency p50 {np.percentile(latencies, 50):.1f} ms, p95 {np.percentile(latencies, 95):.1f} ms")
    known = [(item, text) for item, text, _ in read if item.truth is not None]
    if known:
        exact = sum(text == item.truth for item, text in known)
        lines.append(f"summary: accuracy {exact / len(known):.1%} ({exact} of {len(known)} read exactly)")
    if failed := len(items) - len(read):
        lines.append(f"summary: {failed} failed")
    return "\n".join(lines)


async def read_all(args: argparse.Namespace, items: Sequence[Item]) -> int:
    async with grpcaio.InferenceServerClient(args.url) as client:
        state, reason = await model_readiness(client, args.model, args.timeout)
    if state is Readiness.NO_MODEL:
        print(f"demo: the server is up but model {args.model!r} is not ready: start it with that model "
              "(make serve, or python -m str_ocr_server --models ocr)", file=sys.stderr)
        return EXIT_NO_MODEL
    if state is Readiness.UNREACHABLE:
        print(f"demo: cannot reach a Triton server ({reason}); start one with `make serve`, or pass --url", file=sys.stderr)
        return EXIT_UNREACHABLE
    bar = tqdm(total=len(items), desc="reading", unit="img", disable=args.quiet or not sys.stderr.isatty(), leave=False)

    def show(index: int, outcome: Outcome) -> None:
        bar.update()
        if not args.quiet:
            tqdm.write(format_answer(items[index], outcome))

    start = time.perf_counter()
    outcomes = await infer_each(args.url, args.model, [image_inputs(i.data) for i in items], args.concurrency,
                                args.timeout, on_outcome=show)
    bar.close()
    print(summary(items, outcomes, time.perf_counter() - start))
    return EXIT_FAILED if not all(o.ok for o in outcomes) else 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m client.demo", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-u", "--url", default=f"localhost:{DEFAULT_PORTS.grpc}", help="the server's gRPC address (default %(default)s)")
    parser.add_argument("-m", "--model", default=OCR, help="the model to call (default %(default)s)")
    parser.add_argument("--images", type=Path, help="a folder of images to read (default: generated text lines)")
    parser.add_argument("--count", type=int, default=32, help="how many lines to generate without --images (default %(default)s)")
    parser.add_argument("--format", choices=["png", "jpeg"], default="png", help="file format of generated lines (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated lines (default %(default)s)")
    parser.add_argument("-c", "--concurrency", type=int, default=8, help="requests in flight (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the server, and for each answer (default %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the summary only")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    items = images_from_folder(args.images) if args.images else generated_images(args.count, args.seed, args.format)
    return asyncio.run(read_all(args, items))


if __name__ == "__main__":
    sys.exit(main())
