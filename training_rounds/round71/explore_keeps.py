"""Exploration, nothing trained: with every variable-width line read again (E at both other stretches, O as served and
at both), which threshold and which vote read best? Columns: the served vote (each text's confidences summed, the
first reading left out); O's readings weighed 1.5; weighed 2; the first reading counted too; both; confidences
squared; their square roots. Rows: the threshold below which a line is read again (1.1: every line). Held-out,
seed 8769, 2,000 lines a polarity.

    PYTHONPATH=backend_src python training_rounds/round71/explore_keeps.py [GROUP [SEED]]   # held-out 8769
"""
import sys
from collections import defaultdict
import numpy as np
sys.path.insert(0, "training_rounds/round68")
import weights  # noqa: E402 (round 68's)
from served import SECOND  # noqa: E402 (beside this script)
from str_ocr.contract import LINE_STRETCH
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import rereadings

limits = LineLimits(stretch=LINE_STRETCH)
E, second = weights.reader(weights.E), weights.reader(SECOND)
group = sys.argv[1] if len(sys.argv) > 1 else "held-out"
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 8769


def kept_text(first, again, w_second, with_first, power):
    support = defaultdict(float)
    if with_first:
        support[first.text] += first.confidence ** power
    for reading, is_second in again:
        support[reading.text] += (w_second if is_second else 1.0) * reading.confidence ** power
    return max(support, key=support.__getitem__)


for name, samples in draw_group(group, seed, 2000).items():
    if "variable" not in name:
        continue
    lines, truth = [s.image for s in samples], [s.text for s in samples]
    first = E(lines)
    plans = rereadings(lines, first, 1.1, limits, second=True)
    by_line = defaultdict(list)
    for plan, reader, is_second in zip(plans, [E, second], [False, True]):
        for i, reading in zip(plan.of, reader(plan.resampled)):
            by_line[i].append((reading, is_second))
    print(name, flush=True)
    for below in (0.8, 0.9, 0.95, 0.99, 1.1):
        row = []
        for w, with_first, power in ((1, False, 1), (1.5, False, 1), (2, False, 1), (1, True, 1), (1.5, True, 1),
                                     (1, False, 2), (1, False, 0.5)):
            texts = [kept_text(f, by_line[i], w, with_first, power) if f.confidence < below else f.text
                     for i, f in enumerate(first)]
            row.append(f"{np.mean([a == b for a, b in zip(texts, truth)]):.2%}")
        print(f"  below {below}: " + " ".join(row), flush=True)
