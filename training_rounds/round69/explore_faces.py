"""Exploration, nothing trained: which held-out faces hold the variable-width mistakes of E with round 68's S, the pair
served when this was read (seed 6117, 1,000 lines a polarity, read as served), and whether the faces whose figures
are old-style by default (a 0 round as an o, a 1 small as an i) read worse than others: the held-out EB Garamond 12
beside the training faces of that kind and 48 other training faces, 40 dark-on-light variable-width lines a training
face and 200 an EB Garamond one (seed 7069, drawn as ``evaluate.face_scores`` draws a face). A face's zero is marked
(slashed or dotted) when a row through its middle crosses three strokes where its O's cross two.

    PYTHONPATH=backend_src python training_rounds/round69/explore_faces.py
"""
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from str_ocr.contract import LINE_STRETCH, READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.fonts import font_files
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure
from str_ocr.synth import TextLineSynth, Variety, has_old_style_figures

sys.path.insert(0, "training_rounds/round68")
import weights  # noqa: E402 (round 68's)

S = "training_rounds/round68/str_64ch.pth"  # the second weights served when this was read
first, second = weights.reader(weights.E), weights.reader(S)


def read_as_served(images: list[np.ndarray]) -> list[str]:
    limits = LineLimits(stretch=LINE_STRETCH)
    readings, _ = read_again_where_unsure(images, first, READ_AGAIN_BELOW, limits, second=second)
    return [reading.text for reading in readings]


def strokes_across_middle(font: ImageFont.FreeTypeFont, character: str) -> int:
    """How many strokes a row through the middle fifth of the glyph crosses (the median over those rows)."""
    left, top, right, bottom = font.getbbox(character)
    glyph = Image.new("L", (right - left + 4, bottom - top + 4), 0)
    ImageDraw.Draw(glyph).text((2 - left, 2 - top), character, font=font, fill=255)
    ink = np.asarray(glyph) > 127
    rows = ink[ink.shape[0] * 2 // 5: ink.shape[0] * 3 // 5 + 1]
    return int(np.median([row[0] + np.sum(row[1:] & ~row[:-1]) for row in rows]))


def marked_zero(path: Path) -> bool:
    font = ImageFont.truetype(str(path), 64)
    return strokes_across_middle(font, "0") >= 3 and strokes_across_middle(font, "O") == 2


def mistakes_by_face() -> None:
    for name, samples in draw_group("held-out", 6117, 1000).items():
        if "variable" not in name:
            continue
        lines, wrong = Counter(s.face for s in samples), Counter()
        for sample, text in zip(samples, read_as_served([s.image for s in samples])):
            wrong[sample.face] += text != sample.text
        print(f"{name}: {sum(wrong.values())} wrong of {len(samples)}")
        for face, count in wrong.most_common():
            if count:
                marks = [mark for mark, has in (("marked zero", marked_zero(face)),
                                                ("old-style figures", has_old_style_figures(face, ask_onum=False)))
                         if has]
                print(f"  {face.stem:24} {count:2} wrong of {lines[face]:3}  {', '.join(marks)}")


def old_style_against_others() -> None:
    training, held_out = font_files("extended"), font_files("held-out")
    old_style = [path for path in training if has_old_style_figures(path, ask_onum=False)]
    groups = (("held-out EB Garamond 12", [path for path in held_out if path.stem.startswith("EBGaramond")], 200),
              ("training, old-style figures", old_style, 40),
              ("training, 48 others", random.Random(1).sample(sorted(set(training) - set(old_style)), 48), 40))
    for label, faces, count in groups:
        rates = []
        for i, path in enumerate(faces):
            synth = TextLineSynth(7069 + i, [path], variety=Variety(light_on_dark=0.0))
            samples = [synth.sample() for _ in range(count)]
            texts = read_as_served([s.image for s in samples])
            rates.append((sum(t != s.text for s, t in zip(samples, texts)) / count, path.stem))
        worst = ", ".join(f"{face} {rate:.0%}" for rate, face in sorted(rates, reverse=True)[:6])
        print(f"{label}: {len(faces)} faces, {np.mean([rate for rate, _ in rates]):.1%} of lines wrong; worst {worst}")


mistakes_by_face()
old_style_against_others()
