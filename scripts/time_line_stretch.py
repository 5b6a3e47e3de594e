"""What reading variable-width lines ``LINE_STRETCH`` times as wide costs: the same held-out lines drawn at their
aspect ratio and at the served stretch, read in turn by the served weights in-process, round after round.

    .venv/bin/python scripts/time_line_stretch.py [--count 500] [--rounds 4] [--threads 1,2]

Prints the mean columns a line at each stretch, then for each thread count the fastest milliseconds a line at each
and the ratio of the two round by round (timings here vary from run to run: the ratios of one run compare).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from str_ocr.checkpoint import load_model
from str_ocr.contract import LINE_STRETCH, UNSTRETCHED
from str_ocr.engines import build_engine, choose_engine
from str_ocr.evaluate import draw_group
from str_ocr.recognizer import Recognizer
from str_ocr_triton.config import served_weights

SET = "held-out: variable width, dark on light"


def seconds_to_read(recognizer: Recognizer, lines: list[np.ndarray]) -> float:
    """The wall-clock seconds ``recognizer`` takes to read ``lines``."""
    start = time.perf_counter()
    recognizer.read(lines)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="lines (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=4, help="readings of each, interleaved (default %(default)s)")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default %(default)s)")
    parser.add_argument("--seed", type=int, default=5657, help="seed of the lines (default %(default)s)")
    args = parser.parse_args()
    if LINE_STRETCH == UNSTRETCHED:
        raise SystemExit("LINE_STRETCH is UNSTRETCHED (str_ocr.contract): no cost to time")
    stretches = (UNSTRETCHED, LINE_STRETCH)
    lines = {s: [x.image for x in draw_group("held-out", args.seed, args.count, line_stretch=s)[SET]]
             for s in stretches}
    print(", ".join(f"{s:g}x: {np.mean([line.shape[1] for line in lines[s]]):.0f} columns" for s in stretches))
    model = load_model(*served_weights())
    device = torch.device("cpu")
    for threads in (int(t) for t in args.threads.split(",")):
        torch.set_num_threads(threads)
        engine = build_engine(model, choose_engine("torch", device), device, threads, "f32")
        recognizer = Recognizer(engine, max_lines=256)
        for s in stretches:  # the first reads of each shape pay for allocations
            recognizer.read(lines[s])
        seconds = {s: [] for s in stretches}
        for _ in range(args.rounds):
            for s in stretches:
                seconds[s].append(seconds_to_read(recognizer, lines[s]))
        fastest = ", ".join(f"{s:g}x {1e3 * min(seconds[s]) / args.count:.2f} ms" for s in stretches)
        ratios = ", ".join(f"{b / a:.2f}" for a, b in zip(*seconds.values()))
        print(f"{threads} thread(s): {fastest} a line; {LINE_STRETCH:g}x / 1x round by round: {ratios}")


if __name__ == "__main__":
    main()
