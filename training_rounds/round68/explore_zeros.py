"""Exploration, nothing trained: of the served pair's 0/o mistakes on the held-out variable-width lines, how many
are a 0 against a capital O (an UPPER line, or a Title line's first character) and how many against a small o, and
in which faces? Seed 6117 (the exploration lines of rounds 59-67), 1,000 lines a polarity, read as served.

    PYTHONPATH=backend_src python training_rounds/round68/explore_zeros.py
"""
from collections import Counter

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure

import weights  # beside this script

E, X = weights.reader(weights.E), weights.reader(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images = [s.image for s in samples]
    readings, _ = read_again_where_unsure(images, E, READ_AGAIN_BELOW, LineLimits(stretch=1.2), second=X)
    kinds, faces, other = Counter(), Counter(), 0
    for sample, reading in zip(samples, readings):
        truth, read = sample.text, reading.text
        if read == truth:
            continue
        swaps = [i for i, (t, r) in enumerate(zip(truth, read)) if t != r]
        if len(read) != len(truth) or any({truth[i], read[i]} != {"0", "o"} for i in swaps):
            other += 1
            continue
        for i in swaps:
            capital = sample.case == "UPPER" or (sample.case == "Title" and i == 0)
            kinds[f"{truth[i]} read {read[i]}, {'capital O' if capital else 'small o'} line"] += 1
            faces[sample.face] += 1
    print(f"{name}: {sum(r.text == s.text for r, s in zip(readings, samples))} right; 0/o swaps only: "
          f"{dict(kinds)}; other mistakes {other}; faces {faces.most_common(8)}", flush=True)
