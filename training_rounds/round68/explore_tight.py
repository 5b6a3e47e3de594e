"""Exploration, nothing trained: a variable-width line keeps the margins it was drawn with (up to 0.3 of the font
size above and below), so its glyphs may fill as little as about three fifths of the 32 rows the recogniser reads. Read
again with those margins cut away and the ink scaled to the full height (the same stretch), do the served pair's
readings again keep the truth more often? Seed 6117, 1,000 held-out variable-width lines a polarity, read again
below 0.9 (served); the cut lines are read by both weights and counted with the readings again.

    PYTHONPATH=backend_src python training_rounds/round68/explore_tight.py
"""
import numpy as np
from PIL import Image

from str_ocr.contract import READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits, resize_line
from str_ocr.read_again import SERVED_KEEP, readings_again, rereadings

import weights  # beside this script

LIMITS = LineLimits(stretch=1.2)


def ink_rows(line: np.ndarray) -> tuple[int, int]:
    """The first and last rows of ``line`` (grey ``[32, W]``) whose grey levels vary as a text's rows do: more than
    a quarter of the most varied row's spread, one row of margin kept either side."""
    spread = line.astype(np.float32).std(axis=1)
    rows = np.flatnonzero(spread > 0.25 * spread.max())
    return max(int(rows[0]) - 1, 0), min(int(rows[-1]) + 1, len(line) - 1)


def cut_to_ink(line: np.ndarray) -> np.ndarray:
    """``line`` without its blank rows above and below, scaled back to ``INPUT_HEIGHT`` rows at its stretch."""
    top, bottom = ink_rows(line)
    band = Image.fromarray(line[top:bottom + 1])
    return np.asarray(resize_line(band, min_width=LIMITS.min_width, max_width=LIMITS.max_width, stretch=1.0))


E, X = weights.reader(weights.E), weights.reader(weights.X)
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first = E(images)
    plans = rereadings(images, first, READ_AGAIN_BELOW, LIMITS, second=True)
    again = [E(plans[0].resampled), X(plans[1].resampled)]
    by_line = readings_again(plans, again)
    unsure = sorted(by_line)
    cut = [cut_to_ink(images[i]) for i in unsure]
    taller = sum(line.shape[1] > images[i].shape[1] for line, i in zip(cut, unsure))  # blank rows were cut
    cut_readings = dict(zip(unsure, zip(E(cut), X(cut))))
    served, with_cut, only_cut = list(first), list(first), list(first)
    oracle = sum(first[i].text == truths[i] for i in range(len(images)) if i not in by_line)
    oracle_cut = 0
    for i in unsure:
        served[i] = SERVED_KEEP(first[i], by_line[i])
        with_cut[i] = SERVED_KEEP(first[i], by_line[i] + list(cut_readings[i]))
        only_cut[i] = SERVED_KEEP(first[i], list(cut_readings[i]))
        served_texts = {r.text for r in [first[i], *by_line[i]]}
        oracle += truths[i] in served_texts
        oracle_cut += truths[i] not in served_texts and truths[i] in {r.text for r in cut_readings[i]}
    oracle_cut += oracle

    def right(readings):
        return sum(r.text == t for r, t in zip(readings, truths))

    print(f"{name}: {len(unsure)} read again, {taller} of them cut taller; served {right(served)}; the cut lines' "
          f"readings counted too {right(with_cut)}; the cut lines' readings alone {right(only_cut)}; truth among the "
          f"served readings {oracle}, among them and the cut lines' {oracle_cut}", flush=True)
