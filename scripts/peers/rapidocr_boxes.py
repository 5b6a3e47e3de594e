"""RapidOCR's DB post-processing (probability map -> boxes) timed on maps saved by scripts/time_box_finding.py.

Runs inside .venv-rapidocr (`make peers`); imports nothing of this project:

    .venv-rapidocr/bin/python scripts/peers/rapidocr_boxes.py maps.npz

Prints one JSON object: {"seconds": [per map], "boxes": [per map]}, with RapidOCR's own settings (config.yaml).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from rapidocr_onnxruntime.ch_ppocr_det.utils import DBPostProcess


def main() -> int:
    maps = np.load(sys.argv[1])
    post = DBPostProcess(thresh=0.3, box_thresh=0.5, max_candidates=1000, unclip_ratio=1.6, score_mode="fast",
                         use_dilation=True)
    seconds, boxes = [], []
    for name in sorted(maps.files, key=int):
        probability = maps[name]
        post(probability, probability.shape[2:])  # warm
        start = time.perf_counter()
        found, _ = post(probability, probability.shape[2:])
        seconds.append(time.perf_counter() - start)
        boxes.append(len(found))
    print(json.dumps({"seconds": seconds, "boxes": boxes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
