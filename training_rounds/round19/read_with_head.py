"""Round 19's screen: the shipped weights with and without a prototype context head, on the same lines of
``scripts/evaluate.py``'s sets, each set's word accuracy and the difference line by line with its 95 % interval.
From the repository root:

    .venv/bin/python training_rounds/round19/read_with_head.py HEAD SEED COUNT current,training,held-out OUT.json
"""

import json
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from str_ocr import STRModel, load_model
from str_ocr.evaluate import draw_group
from str_ocr.metrics import paired_difference, score
from str_ocr.synth import Sample
from str_ocr.text import greedy_decode
from str_ocr.training import collate, line_log_probs

sys.path.insert(0, str(Path(__file__).parent))  # the prototype beside this file
from context_head import SHIPPED, ContextHead, head_logits  # noqa: E402

BATCH = 64


def readings(model: STRModel, head: ContextHead, samples: list[Sample],
             beneath: STRModel | None = None) -> tuple[list[str], list[str]]:
    """Each line's reading by ``model`` alone and with the head over ``beneath``'s frames (default: ``model``'s),
    in batches of lines of about one width."""
    plain, context = [""] * len(samples), [""] * len(samples)
    order = sorted(range(len(samples)), key=lambda i: samples[i].image.shape[1])
    for start in range(0, len(order), BATCH):
        members = order[start : start + BATCH]
        batch = collate([samples[i] for i in members])
        with torch.no_grad():
            without = line_log_probs(model, batch, torch.device("cpu"))
            with_head = head_logits(model if beneath is None else beneath, head, batch)
        for k, (i, length) in enumerate(zip(members, batch.input_lengths)):
            plain[i] = greedy_decode(without[k, :length].numpy()).text
            context[i] = greedy_decode(with_head[k, :length].numpy()).text
    return plain, context


def screen(read_pair: Callable[[list[Sample]], tuple[list[str], list[str]]], seed: int, count: int, groups: str,
           out: str) -> None:
    """Each set's word accuracy as ``read_pair`` reads it without and with the change, and their difference."""
    results = {}
    for group in groups.split(","):
        for name, samples in draw_group(group, seed, count).items():
            truths = [s.text for s in samples]
            plain, context = read_pair(samples)
            difference = paired_difference(context, plain, truths)
            results[name] = {"plain": score(plain, truths).word_accuracy * 100,
                             "context": score(context, truths).word_accuracy * 100,
                             "difference": difference.difference * 100, "margin": difference.margin * 100}
            print(f"{name:45} without {results[name]['plain']:6.2f} with {results[name]['context']:6.2f} "
                  f"difference {results[name]['difference']:+.2f} +-{results[name]['margin']:.2f}", flush=True)
    Path(out).write_text(json.dumps(results, indent=1))


def main() -> None:
    head_path, seed, count, groups, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    torch.set_num_threads(2)
    model = load_model(SHIPPED, 64).eval()
    head = ContextHead()
    head.load_state_dict(torch.load(head_path))
    head.eval()
    screen(lambda samples: readings(model, head, samples), seed, count, groups, out)


if __name__ == "__main__":
    main()
