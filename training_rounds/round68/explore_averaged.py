"""Exploration, nothing trained: does reading an unsure line with the first and second weights' frame
probabilities averaged (one reading per stretch read again, both weights reading the same resampled line) read
the held-out variable-width lines better than the served pair's readings again? Seed 6117 (the exploration lines
of rounds 59-67), 1,000 lines a polarity, read again below 0.9 (served).

    PYTHONPATH=backend_src python training_rounds/round68/explore_averaged.py
"""
import numpy as np
import torch

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits, normalize
from str_ocr.read_again import SERVED_KEEP, kept_readings, most_agreed, rereadings
from str_ocr.text import greedy_decode

import weights  # beside this script


def probabilities(run, lines):
    """Each line's frame probabilities ``[T, 37]``."""
    results = run([normalize(line)[np.newaxis, np.newaxis] for line in lines])
    return [torch.softmax(r[0].float(), dim=1).numpy().astype(np.float64) for r in results]


def decoded(probs):
    return greedy_decode(np.log(np.clip(probs, 1e-30, None)))


E = weights.recognizer(weights.E)
X = weights.recognizer(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first = [decoded(p) for p in probabilities(E, images)]
    plans = rereadings(images, first, READ_AGAIN_BELOW, LineLimits(stretch=1.2), second=True)
    e_again, x_again = probabilities(E, plans[0].resampled), probabilities(X, plans[1].resampled)
    served, _ = kept_readings(first, plans, [[decoded(p) for p in e_again], [decoded(p) for p in x_again]],
                              SERVED_KEEP)
    unsure = [i for i, r in enumerate(first) if r.confidence < READ_AGAIN_BELOW]
    x_served = dict(zip(plans[1].of[:len(unsure)], x_again[:len(unsure)]))  # X read the unsure lines as served first
    e_served = probabilities(E, [images[i] for i in unsure])
    x_resampled = x_again[len(unsure):]  # then as the first weights' plan resampled them, in its order
    averaged_by_line = {i: [decoded((e + x_served[i]) / 2)] for i, e in zip(unsure, e_served)}
    for i, e, x in zip(plans[0].of, e_again, x_resampled):
        averaged_by_line[i].append(decoded((e + x) / 2))
    only_averaged = [most_agreed(first[i], averaged_by_line[i]) if i in averaged_by_line else first[i]
                     for i in range(len(images))]
    served_plus = [SERVED_KEEP(first[i], averaged_by_line[i] + [served[i]]) if i in averaged_by_line
                   else first[i] for i in range(len(images))]
    at_served_stretch = [averaged_by_line[i][0] if i in averaged_by_line else first[i] for i in range(len(images))]

    def right(readings):
        return sum(r.text == t for r, t in zip(readings, truths))

    print(f"{name}: {len(unsure)} read again; served {right(served)}; averaged at each stretch, most agreed "
          f"{right(only_averaged)}; averaged at the served stretch alone {right(at_served_stretch)}; "
          f"averaged with the served reading {right(served_plus)}", flush=True)
