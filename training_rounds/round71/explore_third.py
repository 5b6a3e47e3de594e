"""Exploration, nothing trained: do third weights, reading the unsure variable-width lines as the second weights do
(as served and at the other stretches), their readings counted in the vote with the pair's, make the served pair E+O
read the held-out variable-width lines better? Seed 8769, 2,000 lines a polarity.

    PYTHONPATH=backend_src python training_rounds/round71/explore_third.py training_rounds/round69/str_64ch.pth \
        training_rounds/round62/str_64ch.pth training_rounds/round43/str_64ch.pth \
        training_rounds/round14/str_64ch.pth training_rounds/base/str_64ch.pth
"""
import sys
import numpy as np
sys.path.insert(0, "training_rounds/round68")
import weights  # noqa: E402 (round 68's)
from served import SECOND, held_out_variable_sets, read_as_served  # noqa: E402 (beside this script)
from str_ocr.read_again import kept_readings, most_agreed  # noqa: E402

CANDIDATES = sys.argv[1:]
E, second = weights.reader(weights.E), weights.reader(SECOND)
for name, samples in held_out_variable_sets():
    truth = [s.text for s in samples]
    first, plans, again = read_as_served(E, second, [s.image for s in samples])
    pair, count = kept_readings(first, plans, again, most_agreed)
    right_pair = np.array([r.text == t for r, t in zip(pair, truth)])
    print(f"{name}: E+O {right_pair.mean():.2%}, {count} read again", flush=True)
    for path in CANDIDATES:
        w_again = weights.reader(path)(plans[1].resampled)
        trio, _ = kept_readings(first, plans + [plans[1]], again + [w_again], most_agreed)
        right = np.array([r.text == t for r, t in zip(trio, truth)])
        print(f"  +{path}: {right.mean():.2%} (gained {int((right & ~right_pair).sum())}, "
              f"lost {int((~right & right_pair).sum())})", flush=True)
