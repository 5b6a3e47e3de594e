"""Exploration, nothing trained: the served pair reads an unsure line five times again, four of them at another
stretch (1.2 narrower or wider), where a 0 and a capital O trade widths. Which way of keeping one of the readings
reads the held-out variable-width lines best? Seed 6117 (the exploration lines of rounds 59-67), 1,000 lines a
polarity, read again below 0.9 (served).

    PYTHONPATH=backend_src python training_rounds/round68/explore_keeps.py
"""
from collections import defaultdict

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import most_agreed, most_confident, read_again_stretches, restretched

import weights  # beside this script

LIMITS = LineLimits(stretch=1.2)


def weighed_agreement(readings, counts):
    support = defaultdict(float)
    for reading, weight in zip(readings, counts):
        support[reading.text] += weight * reading.confidence
    return max(support, key=support.__getitem__)


E, X = weights.reader(weights.E), weights.reader(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first = E(images)
    unsure = [i for i, r in enumerate(first) if r.confidence < READ_AGAIN_BELOW]
    narrow, wide = read_again_stretches(LIMITS.stretch)
    lines = {s: [restretched(images[i], s, LIMITS) for i in unsure] for s in (narrow, wide)}
    changed = {s: [line.shape != images[i].shape for line, i in zip(lines[s], unsure)] for s in lines}
    e_narrow, e_wide = E(lines[narrow]), E(lines[wide])
    x_served, x_narrow, x_wide = X([images[i] for i in unsure]), X(lines[narrow]), X(lines[wide])

    def six(k):
        """Line ``unsure[k]``'s first reading and its readings again, as served: not at a stretch that the line's
        width limits leave as it was (``rereading``); the weights they are counted with, as ``weighed_agreement``
        takes them."""
        readings = [(first[unsure[k]], 2), (e_narrow[k], 1, narrow), (e_wide[k], 1, wide), (x_served[k], 2),
                    (x_narrow[k], 1, narrow), (x_wide[k], 1, wide)]
        return [r[:2] for r in readings if len(r) == 2 or changed[r[2]][k]]

    def texts(k):
        return [reading for reading, _ in six(k)]

    rules = {
        "served (most agreed of the readings again)": lambda k: most_agreed(texts(k)[0], texts(k)[1:]).text,
        "most confident of all": lambda k: most_confident(texts(k)[0], texts(k)[1:]).text,
        "most agreed of all": lambda k: weighed_agreement(texts(k), [1] * len(six(k))),
        "most agreed, the served stretch twice": lambda k: weighed_agreement(texts(k), [w for _, w in six(k)]),
        "most confident at the served stretch": lambda k: most_confident(first[unsure[k]], [x_served[k]]).text,
    }
    read_again = set(unsure)
    right_first = sum(first[i].text == truths[i] for i in range(len(images)) if i not in read_again)
    row = [f"{rule} {right_first + sum(keep(k) == truths[i] for k, i in enumerate(unsure))}"
           for rule, keep in rules.items()]
    oracle = right_first + sum(truths[i] in {r.text for r in texts(k)} for k, i in enumerate(unsure))
    print(f"{name}: {len(unsure)} read again; " + "; ".join(row) + f"; truth among them {oracle}", flush=True)
