"""Exploration, nothing trained: a 0 among capitals, and a capital O, drawn in a few faces (held-out: Cabin, Go Mono,
B612 Mono, Hack; training: DejaVu Sans, Liberation Sans) and read by E and X (served pair) at stretches from 0.8 to
1.7 (1.2 served). Does the reading of a round capital-height glyph follow how wide it is drawn (its aspect), not what
it is? Each cell: E's reading / X's (other second weights: their path as the argument).

    PYTHONPATH=backend_src python training_rounds/round68/explore_capital_zeros.py [SECOND_WEIGHTS]
"""
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from str_ocr import fonts
from str_ocr.preprocess import resize_line

import weights  # beside this script

STRETCHES = (0.8, 1.0, 1.2, 1.44, 1.7)
TEXTS = ("H0D0K", "HODOK", "7K0T0", "B0O0B", "0", "O", "X0RO2")
FACES = ("Cabin-Bold.otf", "Cabin-Regular.otf", "Go-Mono.ttf", "B612Mono-Regular.otf", "Hack-Regular.ttf",
         "DejaVuSans.ttf", "LiberationSans-Regular.ttf")


def drawn(text, font):
    left, top, right, bottom = font.getbbox(text)
    canvas = Image.new("L", (right - left + 12, bottom - top + 12), 255)
    ImageDraw.Draw(canvas).text((6 - left, 6 - top), text, font=font, fill=0)
    return canvas


SECOND = sys.argv[1] if len(sys.argv) > 1 else weights.X
E, X = weights.reader(weights.E), weights.reader(SECOND)
paths = {p.name: p for group in ("held-out", "training") for p in fonts.font_files(group)}
print("stretch:", " ".join(f"{s:>11}" for s in STRETCHES))
for face in FACES:
    font = ImageFont.truetype(str(paths[face]), 40)
    print(face)
    for text in TEXTS:
        lines = [np.asarray(resize_line(drawn(text, font), stretch=s)) for s in STRETCHES]
        cells = [f"{e.text}/{x.text}" for e, x in zip(E(lines), X(lines))]
        print(f"  {text:6s}", " ".join(f"{c:>11}" for c in cells))
