"""Exploration, nothing trained: the served pair reads each variable-width line with the first weights E and the
unsure ones again with E and the second weights X. Would X first and E second read the held-out variable-width
lines better? Seed 6117 (the exploration lines of rounds 59-67), 1,000 lines a polarity, read again below 0.9, the
most agreed reading kept (served).

    PYTHONPATH=backend_src python training_rounds/round68/explore_swapped.py
"""

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure

import weights  # beside this script

E, X = weights.reader(weights.E), weights.reader(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    row = []
    for label, first, second in (("E then X (served)", E, X), ("X then E", X, E), ("X alone", X, None)):
        readings, again = read_again_where_unsure(images, first, READ_AGAIN_BELOW, LineLimits(stretch=1.2), second)
        row.append(f"{label} {sum(r.text == t for r, t in zip(readings, truths))} ({again} read again)")
    print(f"{name}: " + "; ".join(row), flush=True)
