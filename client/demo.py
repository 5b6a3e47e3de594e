"""Read text from images with the served ``ocr`` ensemble (lines) or ``ocr_page`` (whole images), over asyncio gRPC.

    .venv/bin/python -m client.demo --url localhost:8001                # 32 generated lines, truth known
    .venv/bin/python -m client.demo --url localhost:8001 --images DIR  # every PNG/JPEG in DIR, each one line
    .venv/bin/python -m client.demo --url localhost:8001 --page a.png b.jpg [--out DIR]  # whole images

Sends each image's bytes as one request with at most ``--concurrency`` in flight. For lines it prints what each
one says, its confidence and latency, and ends with throughput, p50/p95 latency and, where the true text is
known (generated lines, or files named ``<anything>_<text>.png``), the accuracy. For pages it prints every word
with its confidence and box, in reading order, and writes ``DIR/<name>.read.png``: the image with the boxes and
words drawn on it.

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

from str_ocr.contract import DEFAULT_PORTS, OCR, OCR_PAGE
from str_ocr_client.drawing import draw_words
from str_ocr_client.readiness import Readiness, model_readiness
from str_ocr_client.requests import image_inputs, page_inputs, text_of, words_of
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
        lines.append(f"summary: latency p50 {np.percentile(latencies, 50):.1f} ms, "
                     f"p95 {np.percentile(latencies, 95):.1f} ms")
    known = [(item, text) for item, text, _ in read if item.truth is not None]
    if known:
        exact = sum(text == item.truth for item, text in known)
        lines.append(f"summary: accuracy {exact / len(known):.1%} ({exact} of {len(known)} read exactly)")
    if failed := len(items) - len(read):
        lines.append(f"summary: {failed} failed")
    return "\n".join(lines)


def format_page(path: Path, outcome: Outcome, picture: Path | None) -> str:
    if not outcome.ok:
        return f"{path.name}: ERROR {str(outcome.result).splitlines()[0]}"
    words = words_of(outcome.result)
    drawn = f", drawn in {picture}" if picture else ""
    lines = [f"{path.name}: {len(words)} words in {outcome.seconds * 1e3:.0f} ms{drawn}"]
    for word in words:
        corners = " ".join(f"{x:.0f},{y:.0f}" for x, y in word.corners)
        lines.append(f"  {word.text!r:24} confidence {word.confidence:.3f}  box {corners}")
    return "\n".join(lines)


async def ready(args: argparse.Namespace) -> int:
    """0 when ``args.model`` answers, else the exit status that says why not (and a line on stderr)."""
    async with grpcaio.InferenceServerClient(args.url) as client:
        state, reason = await model_readiness(client, args.model, args.timeout)
    if state is Readiness.NO_MODEL:
        print(f"demo: the server is up but model {args.model!r} is not ready: start it with that model "
              f"(make serve, or python -m str_ocr_server --models {args.model})", file=sys.stderr)
        return EXIT_NO_MODEL
    if state is Readiness.UNREACHABLE:
        print(f"demo: cannot reach a Triton server ({reason}); start one with `make serve`, or pass --url",
              file=sys.stderr)
        return EXIT_UNREACHABLE
    return 0


async def read_pages(args: argparse.Namespace) -> int:
    if status := await ready(args):
        return status
    blobs = [path.read_bytes() for path in args.page]
    outcomes = await infer_each(args.url, args.model, [page_inputs(b) for b in blobs], args.concurrency, args.timeout)
    args.out.mkdir(parents=True, exist_ok=True)
    for path, data, outcome in zip(args.page, blobs, outcomes):
        picture = None
        if outcome.ok:
            picture = args.out / f"{path.stem}.read.png"
            draw_words(data, words_of(outcome.result)).save(picture)
        print(format_page(path, outcome, picture))
    return EXIT_FAILED if not all(o.ok for o in outcomes) else 0


async def read_all(args: argparse.Namespace, items: Sequence[Item]) -> int:
    if status := await ready(args):
        return status
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
                                     epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-u", "--url", default=f"localhost:{DEFAULT_PORTS.grpc}",
                        help="the server's gRPC address (default %(default)s)")
    parser.add_argument("-m", "--model", default=None,
                        help=f"the model to call (default {OCR}, with --page {OCR_PAGE})")
    parser.add_argument("--images", type=Path, help="a folder of images to read (default: generated text lines)")
    parser.add_argument("--page", type=Path, nargs="+", metavar="FILE", help="whole images to read with ocr_page")
    parser.add_argument("--out", type=Path, default=Path("runs/demo"),
                        help="where --page writes its pictures (default %(default)s)")
    parser.add_argument("--count", type=int, default=32,
                        help="how many lines to generate without --images (default %(default)s)")
    parser.add_argument("--format", choices=["png", "jpeg"], default="png",
                        help="file format of generated lines (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated lines (default %(default)s)")
    parser.add_argument("-c", "--concurrency", type=int, default=8, help="requests in flight (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for the server, and for each answer (default %(default)s)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print the summary only")
    args = parser.parse_args(argv)
    args.model = args.model or (OCR_PAGE if args.page else OCR)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.page:
        return asyncio.run(read_pages(args))
    items = images_from_folder(args.images) if args.images else generated_images(args.count, args.seed, args.format)
    return asyncio.run(read_all(args, items))


if __name__ == "__main__":
    sys.exit(main())
