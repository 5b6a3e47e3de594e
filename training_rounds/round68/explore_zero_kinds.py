"""Exploration, nothing trained: which kinds of line (random characters, word-like, code, digits) and cases hold the
served pair's held-out variable-width mistakes, and its 0/o swaps? A code's or a digit line's kind tells a 0 from
an O; a line of random characters does not. Seed 6117, 1,000 lines a polarity, read as served; the second weights
are X unless given.

    PYTHONPATH=backend_src python training_rounds/round68/explore_zero_kinds.py [SECOND_WEIGHTS]
"""
import sys
from collections import Counter

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure

import weights  # beside this script


def only_zero_swaps(truth: str, read: str) -> bool:
    return len(read) == len(truth) and all({t, r} == {"0", "o"} for t, r in zip(truth, read) if t != r)


second = sys.argv[1] if len(sys.argv) > 1 else weights.X
E, X = weights.reader(weights.E), weights.reader(second)
print(f"second weights: {second}")
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    readings, _ = read_again_where_unsure([s.image for s in samples], E, READ_AGAIN_BELOW, LineLimits(stretch=1.2),
                                          second=X)
    lines, wrong, swaps = Counter(), Counter(), Counter()
    for sample, reading in zip(samples, readings):
        key = f"{sample.kind}, {sample.case}"
        lines[key] += 1
        if reading.text != sample.text:
            wrong[key] += 1
            swaps[key] += only_zero_swaps(sample.text, reading.text)
    print(f"{name}: {sum(wrong.values())} wrong of {len(samples)}, {sum(swaps.values())} of them 0/o swaps only")
    for key in sorted(lines, key=lambda k: -wrong[k]):
        print(f"  {key:28s} {lines[key]:4d} lines, {wrong[key]:3d} wrong, {swaps[key]:3d} 0/o swaps only", flush=True)
