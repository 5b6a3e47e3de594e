"""Exploration, nothing trained: do third weights' readings again, counted with the served pair's, read the
held-out variable-width lines better? Seed 6117 (round 59's exploration lines), 1,000 lines a polarity.

    PYTHONPATH=backend_src python training_rounds/round65/explore_third_weights.py 0.8 \
        V=training_rounds/round60/str_64ch.pth G=training_rounds/round55-gpu/str_64ch.pth
"""
import sys

import torch

from str_ocr.checkpoint import checkpoint_width, load_model
from str_ocr.engines import build_engine, choose_engine
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import most_agreed, readings_again, rereadings
from str_ocr.recognizer import Recognizer

torch.set_num_threads(1)
device = torch.device("cpu")


def reader(path):
    model = load_model(path, checkpoint_width(path))
    return Recognizer(build_engine(model, choose_engine("torch", device), device, 1, "f32"), max_lines=256).read


E = reader("training_rounds/round22/str_64ch.pth")
X = reader("model_repository/text_recognition_second/1/str_64ch.pth")
thirds = {name: reader(path) for name, path in (arg.split("=") for arg in sys.argv[2:])}
below = float(sys.argv[1])
sets = {k: v for k, v in draw_group("held-out", 6117, 1000).items() if "variable" in k}
for name, samples in sets.items():
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first = E(images)
    plans = rereadings(images, first, below, LineLimits(stretch=1.2), second=True)
    again_e, again_x = E(plans[0].resampled), X(plans[1].resampled)
    served = readings_again(plans, [again_e, again_x])

    def right(by_line):
        return sum((most_agreed(first[i], by_line[i]) if i in by_line else first[i]).text == truths[i]
                   for i in range(len(images)))

    row = [f"served {right(served)}"]
    for third, read in thirds.items():
        with_third = readings_again([*plans, plans[1]], [again_e, again_x, read(plans[1].resampled)])
        oracle = sum(truths[i] in {r.text for r in [first[i], *with_third.get(i, [])]} for i in range(len(images)))
        row.append(f"+{third} {right(with_third)} (truth among them {oracle})")
    print(f"{name}: {len(plans[1].of) // 3} read again; " + "; ".join(row), flush=True)
