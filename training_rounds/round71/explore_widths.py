"""Exploration, nothing trained: a capital-height round glyph is told 0 or O by its width (round 68), and the readings
again see an unsure line at other widths too. Where the served vote's text and the two readings at the served width
(E's first reading, found unsure, and the second weights' as served) differ only in 0 and o, and those two agree,
would keeping theirs read better? Held-out, seed 8769, 2,000 variable-width lines a polarity, read as served.

    PYTHONPATH=backend_src python training_rounds/round71/explore_widths.py
"""
import sys

sys.path.insert(0, "training_rounds/round68")
import weights  # noqa: E402 (round 68's)
from served import SECOND, held_out_variable_sets, read_as_served  # noqa: E402 (beside this script)
from str_ocr.contract import READ_AGAIN_BELOW  # noqa: E402
from str_ocr.read_again import kept_readings, most_agreed, unsure_lines  # noqa: E402

ZERO_O = str.maketrans("0", "o")


def differ_in_zeros_alone(a: str, b: str) -> bool:
    return a != b and a.translate(ZERO_O) == b.translate(ZERO_O)


E, second = weights.reader(weights.E), weights.reader(SECOND)
for name, samples in held_out_variable_sets():
    truth = [s.text for s in samples]
    first, plans, again = read_as_served(E, second, [s.image for s in samples])
    served, _ = kept_readings(first, plans, again, most_agreed)
    unsure = unsure_lines(first, READ_AGAIN_BELOW)
    as_served = {i: r.text for i, r in zip(unsure, again[1])}  # the second weights read the served width first
    kept = [r.text for r in served]
    changed = 0
    for i, text in as_served.items():
        if text == first[i].text and differ_in_zeros_alone(text, kept[i]):
            kept[i], changed = text, changed + 1
    right_served = sum(r.text == t for r, t in zip(served, truth))
    right_kept = sum(k == t for k, t in zip(kept, truth))
    fixed = sum(k == t != r.text for k, t, r in zip(kept, truth, served))
    broken = sum(r.text == t != k for k, t, r in zip(kept, truth, served))
    print(f"{name}: served vote {right_served}, served width on 0/o {right_kept} of {len(truth)} "
          f"({changed} lines changed: {fixed} put right, {broken} put wrong)", flush=True)
