"""Exploration, nothing trained: eight of the 0/o swaps explore_zeros.py lists outside EB Garamond, drawn as the
recogniser reads them, one under another, three times their size (explore-zeros-pictured.png). Six are lines of
capitals, where a 0 and an O differ in width alone; in the other two a capital-height O or 0 stands among lower-case
letters.

    PYTHONPATH=backend_src python training_rounds/round71/explore_zeros_pictured.py
"""
import numpy as np
from PIL import Image

from str_ocr.evaluate import draw_group

PICTURED = {"hz920", "kpfywlg000", "oo3", "v0xxn4k5x0bacir2nzzfxe", "sf7kujyf0tuu52d", "gnwy0xguvddo",
            "l0rntbwbbccfo553cfa", "ogxqbeuwlbbo"}
ROW = 36

lines = [sample.image for name, samples in draw_group("held-out", 8769, 2000).items() if "variable" in name
         for sample in samples if sample.text in PICTURED]
width = max(line.shape[1] for line in lines)
canvas = np.full((len(lines) * ROW, width), 128, np.uint8)
for i, line in enumerate(lines):
    canvas[i * ROW:i * ROW + line.shape[0], :line.shape[1]] = line
Image.fromarray(canvas).resize((width * 3, len(lines) * ROW * 3), Image.Resampling.NEAREST).save(
    "training_rounds/round71/explore-zeros-pictured.png")
