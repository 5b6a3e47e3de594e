"""Word accuracy and character error rate of the recogniser on held-out synthetic lines.

    .venv/bin/python scripts/evaluate.py                       # the shipped weights, in-process
    .venv/bin/python scripts/evaluate.py --url 127.0.0.1:8001  # the same lines through the served model
    .venv/bin/python scripts/evaluate.py --checkpoint PATH --output-channels N --speed

Two sets, drawn with a seed that training never uses: the tutorial's fixed 32x100 input (strings of at
most ``FIXED_MAX_CHARS``) and variable-width lines (height 32, aspect ratio kept, 1 to 25 characters).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm import tqdm

from str_ocr import Reading, Recognizer, load_model
from str_ocr.benchmark import images_per_second
from str_ocr.metrics import score
from str_ocr.preprocess import TUTORIAL_WIDTH
from str_ocr.synth import Sample, TextLineSynth
from str_ocr_client.sending import read_lines
from str_ocr_server.repository import served_weights

DEFAULT_SEED = 20_261_122
LENGTH_BUCKETS = [(1, 5), (6, 10), (11, 15), (16, 20), (21, 25)]


def held_out(seed: int, count: int) -> dict[str, list[Sample]]:
    synth = TextLineSynth(seed)
    return {
        "fixed 32x100": [synth.sample(TUTORIAL_WIDTH) for _ in tqdm(range(count), desc="draw fixed", leave=False)],
        "variable width": [synth.sample() for _ in tqdm(range(count), desc="draw variable", leave=False)],
    }


def report(name: str, samples: list[Sample], readings: list[Reading], examples: int) -> dict:
    texts, truths = [r.text for r in readings], [s.text for s in samples]
    overall = score(texts, truths)
    print(f"{name}: {overall}")
    by_length = {}
    for low, high in LENGTH_BUCKETS:
        picked = [i for i, t in enumerate(truths) if low <= len(t) <= high]
        if picked:
            bucket = score([texts[i] for i in picked], [truths[i] for i in picked])
            by_length[f"{low}-{high}"] = {"lines": bucket.lines, "word_accuracy": bucket.word_accuracy, "cer": bucket.cer}
            print(f"  {low:2}-{high:<2} characters: {bucket}")
    mistakes = [(t, r) for t, r in zip(truths, texts) if t != r]
    for truth, reading in mistakes[:examples]:
        print(f"  mistake: {truth!r} read as {reading!r}")
    return {"lines": overall.lines, "word_accuracy": overall.word_accuracy, "cer": overall.cer, "by_length": by_length,
            "mistakes": [{"truth": t, "read": r} for t, r in mistakes[:examples]]}


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, help="weights (default: what text_recognition's config.pbtxt serves)")
    parser.add_argument("--output-channels", type=int, help="width of the recogniser (with --checkpoint)")
    parser.add_argument("--count", type=int, default=1000, help="lines per set (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--url", help="read through the served model at this gRPC address instead of in-process")
    parser.add_argument("--model", default="text_recognition", help="served model name, with --url")
    parser.add_argument("--examples", type=int, default=6, help="mistakes to show per set")
    parser.add_argument("--speed", action="store_true", help="also time the model alone at batch 1 and 8")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)

    if args.checkpoint is None:
        args.checkpoint, args.output_channels = served_weights()
    model = load_model(args.checkpoint, args.output_channels or 512)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    where = f"served by {args.url} ({args.model})" if args.url else f"in-process on {device}"
    print(f"evaluating {args.checkpoint} ({args.output_channels} channels) {where}, seed {args.seed}")
    results: dict = {"checkpoint": str(args.checkpoint), "where": where, "seed": args.seed, "sets": {}}
    recognizer = Recognizer(model, device, max_lines=256)
    for name, samples in held_out(args.seed, args.count).items():
        images = [s.image for s in samples]
        readings = read_lines(args.url, images, args.model) if args.url else recognizer.read(images)
        results["sets"][name] = report(name, samples, readings, args.examples)
    if args.speed:
        parameters = sum(p.numel() for p in model.parameters())
        speed = {f"batch_{b}": images_per_second(load_model(args.checkpoint, args.output_channels or 512), b) for b in (1, 8)}
        results.update(parameters=parameters, file_bytes=Path(args.checkpoint).stat().st_size, cpu_images_per_second=speed)
        print(f"{parameters:,} parameters, {results['file_bytes'] / 1e6:.1f} MB; in-process on the CPU "
              f"({torch.get_num_threads()} threads): {speed['batch_1']:.0f} img/s at batch 1, {speed['batch_8']:.0f} at batch 8")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
