"""Exploration, nothing trained: the held-out variable-width mistakes of the pair served while round 68 ran (E with
round 62's X) as a picture, each line as the recogniser reads it (twice as large) over its text, what was read, its
face, kind and case (what it shows: training_rounds/README.md, round 68). Seed 6117, 1,000 lines a polarity, read as
served.

    PYTHONPATH=backend_src python training_rounds/round68/picture_mistakes.py OUTPUT.jpg
"""
import sys

from PIL import Image, ImageDraw

from str_ocr.contract import INPUT_HEIGHT, READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure

import weights  # beside this script

WIDTH, LABEL = 1000, 14
ROW = 2 * INPUT_HEIGHT + LABEL

E, X = weights.reader(weights.E), weights.reader(weights.X)
mistakes = []
for name, samples in draw_group("held-out", 6117, 1000).items():
    if "variable" not in name:
        continue
    readings, _ = read_again_where_unsure([s.image for s in samples], E, READ_AGAIN_BELOW, LineLimits(stretch=1.2),
                                          second=X)
    mistakes += [(s, r.text) for s, r in zip(samples, readings) if r.text != s.text]
picture = Image.new("L", (WIDTH, ROW * len(mistakes)), 255)
draw = ImageDraw.Draw(picture)
for k, (sample, read) in enumerate(mistakes):
    line = Image.fromarray(sample.image)
    picture.paste(line.resize((2 * line.width, 2 * INPUT_HEIGHT)), (0, k * ROW))  # clipped at WIDTH
    draw.text((2, k * ROW + 2 * INPUT_HEIGHT), f"{sample.text} read {read}   {sample.face.name}, {sample.kind}, "
              f"{sample.case}", fill=0)
picture.save(sys.argv[1], quality=80)
print(f"{len(mistakes)} mistakes in {sys.argv[1]}")
