"""What two context layers add to the recogniser's cost, in-process, on each CPU engine: the shipped weights and the
same network with round 20's head, timed in turn on the same batches (``str_ocr.benchmark.time_engine``: this
process's CPU time per line, which a busy machine disturbs less than wall time), the median of each over --repeats
rounds and the ratio. From the repository root:

    .venv/bin/python training_rounds/round21/context_cost.py runs/round20-with-context.pth --out OUT.json

``--baseline`` times other weights in the blend's place (weights with fewer context layers, say); the JSON keeps the
names "shipped" and "with context" for the two.
"""

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

import torch
from tqdm import tqdm

from str_ocr import load_model
from str_ocr.benchmark import time_engine
from str_ocr.engines import build_engine
from str_ocr.graphs import CACHE_ENV

SHIPPED = Path("training_rounds/blend/str_64ch.pth")  # the weights shipped when rounds 14 to 22 ran


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("with_context", type=Path, help="weights with context layers (with_context.py writes them)")
    parser.add_argument("--baseline", type=Path, default=SHIPPED,
                        help="the weights timed beside them (default: %(default)s)")
    parser.add_argument("--engines", default="torch,onnxruntime,openvino")
    parser.add_argument("--batches", default="1,8,32")
    parser.add_argument("--widths", default="100,400", help="line widths in pixels (100: the tutorial's 32x100)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="each timing's length")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args()


def main() -> None:
    args = parse()
    torch.set_num_threads(1)
    weights = {"shipped": load_model(args.baseline, 64), "with context": load_model(args.with_context, 64)}
    cases = [(engine, int(batch), int(width)) for engine in args.engines.split(",")
             for batch in args.batches.split(",") for width in args.widths.split(",")]
    with tempfile.TemporaryDirectory() as cache, tqdm(total=len(cases) * args.repeats * 2, desc="timing") as bar:
        os.environ[CACHE_ENV] = cache  # graphs exported for this run only
        results = []
        for engine_name, batch, width in cases:
            engines = {name: build_engine(model, engine_name, torch.device("cpu"), threads=1)
                       for name, model in weights.items()}
            seconds = {name: [] for name in engines}
            for _ in range(args.repeats):  # in turn, so that the machine's load falls on both alike
                for name, engine in engines.items():
                    seconds[name].append(time_engine(engine, batch, width, args.seconds).cpu_seconds_per_image)
                    bar.update()
            medians = {name: statistics.median(values) * 1000 for name, values in seconds.items()}
            results.append({"engine": engine_name, "batch": batch, "width": width, "ms per line": medians,
                            "ratio": medians["with context"] / medians["shipped"]})
            print(f"{engine_name:12} batch {batch:3} width {width:4}: {medians['shipped']:.2f} -> "
                  f"{medians['with context']:.2f} ms per line (x{results[-1]['ratio']:.2f})")
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
