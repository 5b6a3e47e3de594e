"""Exploration, nothing trained: which of the served pair E+O's held-out variable-width mistakes only swap 0 and o, in
which faces ("old-style": figures old-style by default), and the faces of the others. Seed 8769, 2,000 lines a
polarity, read as served; each 0/o line printed with its reading and confidence.

    PYTHONPATH=backend_src python training_rounds/round71/explore_zeros.py
"""
import sys
from collections import Counter
sys.path.insert(0, "training_rounds/round68")
import weights  # noqa: E402 (round 68's)
from served import SECOND  # noqa: E402 (beside this script)
from str_ocr.contract import LINE_STRETCH, READ_AGAIN_BELOW
from str_ocr.evaluate import draw_group
from str_ocr.preprocess import LineLimits
from str_ocr.read_again import read_again_where_unsure
from str_ocr.synth import has_old_style_figures

E, second = weights.reader(weights.E), weights.reader(SECOND)
for name, samples in draw_group("held-out", 8769, 2000).items():
    if "variable" not in name:
        continue
    readings, _ = read_again_where_unsure([s.image for s in samples], E, READ_AGAIN_BELOW,
                                          LineLimits(stretch=LINE_STRETCH), second=second)
    zero_o, other = Counter(), Counter()
    for s, r in zip(samples, readings):
        if r.text == s.text:
            continue
        same_len = len(r.text) == len(s.text)
        swaps = {(a, b) for a, b in zip(s.text, r.text) if a != b} if same_len else set()
        face_label = f"{s.face.stem}{' (old-style)' if has_old_style_figures(s.face, ask_onum=False) else ''}"
        if swaps and swaps <= {("0", "o"), ("o", "0")}:
            zero_o[face_label] += 1
            print(f"   {s.text!r:30} read {r.text!r:30} {face_label} conf {r.confidence:.2f}")
        else:
            other[face_label] += 1
    print(name, "0/o only:", sum(zero_o.values()), zero_o.most_common(), "\n  other:", sum(other.values()),
          other.most_common(12), flush=True)
