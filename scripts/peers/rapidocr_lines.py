"""RapidOCR's recogniser (PP-OCRv4, its PyPI package's weights) reading text lines, in-process, one thread.

Runs inside its own virtualenv (`make peers`), so it imports nothing of this project:

    .venv-rapidocr/bin/python scripts/peers/rapidocr_lines.py lines.npz

``lines.npz`` holds one grey or RGB uint8 image per key, the keys 0, 1, 2, ... Prints one JSON object:
{"texts": [one per image, in key order], "seconds": wall time of the whole read}. The lines go to the
recogniser alone (no detection, no angle classifier), in the batches of RapidOCR's own settings.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from rapidocr_onnxruntime import RapidOCR


def as_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return np.repeat(image[:, :, None], 3, axis=2)
    return np.ascontiguousarray(image[:, :, ::-1])


def main() -> int:
    stored = np.load(sys.argv[1])
    images = [as_bgr(stored[key]) for key in sorted(stored.files, key=int)]
    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
    engine.text_rec(images[:1])  # the first call pays for allocations
    start = time.perf_counter()
    readings, _ = engine.text_rec(images)
    seconds = time.perf_counter() - start
    print(json.dumps({"texts": [text for text, _score in readings], "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
