"""What a crop costs the recogniser's engine alone and in batches, and what masking and a new shape add: the
figures that decide whether pooling a page's crops pays on a machine (docs/pages.md).

    .venv/bin/python scripts/time_recognizer_batches.py [--engine auto] [--threads 1] [--widths 64,128,160,256]

For each width and batch size, the milliseconds per crop of a batch of lines all that wide (the plain graph, as a
padded batch runs) and of the same batch with each line's width passed (the masked graph, as a ragged batch of
different widths runs), each warm, the median of --repeats; then the first call of shapes never met before against
the same shapes met again, single lines (plain) and batches of 4 (masked). The served weights, on the engine and
precision ``auto`` picks here, or the ones named.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial

import torch
from tqdm import tqdm

from str_ocr.checkpoint import load_model
from str_ocr.contract import INPUT_HEIGHT
from str_ocr.engines import ENGINES, PRECISIONS, Engine, build_engine, choose_engine, choose_precision
from str_ocr.runtime import configure_threads
from str_ocr_triton.config import served_weights

NEW_WIDTHS = range(150, 190)
"""Widths for the shapes never met before: those of them that --widths does not time."""


def milliseconds(call: Callable[[], object], repeats: int) -> float:
    """The median milliseconds of ``call``, after two calls unmeasured."""
    call()
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def new_shapes(engine: Engine, widths: Sequence[int], size: int, masked: bool) -> tuple[float, float]:
    """Milliseconds per call of batches of ``size`` lines of each of ``widths`` (never run), then again."""
    batches = [(torch.zeros(size, 1, INPUT_HEIGHT, w), torch.full((size,), w - 4) if masked else None)
               for w in widths]
    passes = []
    for _ in range(2):
        start = time.perf_counter()
        for batch, widths in batches:
            engine(batch, widths)
        passes.append((time.perf_counter() - start) * 1e3 / len(batches))
    return passes[0], passes[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="auto", choices=("auto", *ENGINES))
    parser.add_argument("--precision", default="auto", choices=("auto", *PRECISIONS))
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (a served instance has 1 here)")
    parser.add_argument("--widths", default="64,128,160,256", help="line widths in pixels")
    parser.add_argument("--sizes", default="1,4,8,24", help="lines per batch")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    configure_threads(args.threads)
    device = torch.device("cpu")
    name = choose_engine(args.engine, device, args.precision)
    precision = choose_precision(args.precision, name)
    engine = build_engine(load_model(*served_weights()), name, device, args.threads, precision)
    print(f"{name} {precision}, {args.threads} thread(s): ms per crop, plain / masked")
    timed = [int(w) for w in args.widths.split(",")]
    shapes = [(w, n) for w in timed for n in map(int, args.sizes.split(","))]
    for width, size in tqdm(shapes, desc="batches", unit="shape"):
        batch, widths = torch.zeros(size, 1, INPUT_HEIGHT, width), torch.full((size,), width - 4)
        plain = milliseconds(partial(engine, batch, None), args.repeats) / size
        masked = milliseconds(partial(engine, batch, widths), args.repeats) / size
        tqdm.write(f"  width {width:4d}, {size:2d} a batch: {plain:.2f} / {masked:.2f} (masked {masked / plain:.2f}x)")
    fresh = [w for w in NEW_WIDTHS if w not in timed]
    for size, masked in ((1, False), (4, True)):
        first, again = new_shapes(engine, fresh, size, masked)
        print(f"batches of {size} ({'masked' if masked else 'plain'}), {len(fresh)} widths of {fresh[0]}-{fresh[-1]}, "
              f"each a shape not met before: first call {first:.2f} ms, met again {again:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
