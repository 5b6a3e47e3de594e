"""How long the detector's probability map takes to become boxes: str_ocr.detection.find_boxes beside RapidOCR's
DBPostProcess (PaddleOCR's, which walks the regions one by one), on the same maps, one thread.

    .venv/bin/python scripts/time_box_finding.py [--pages 24] [--words 300]

Draws pages (half of them scenes of up to --words scattered words, each its own region), runs the detector on each,
saves the maps, times both post-processings on every map (each map once warm, then timed), and prints ms per page and
boxes found.
RapidOCR's runs in its own virtualenv (`make peers`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from str_ocr.detection import DetectorSession, choose_detector_engine, detector_input, detector_path, find_boxes
from str_ocr.page import PageSettings, decode_page
from str_ocr.synth import PageSynth

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--words", type=int, default=300, help="words on the crowded half of the pages")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    detector = DetectorSession(detector_path(), 2, *choose_detector_engine("auto", gpu=False))
    synth = PageSynth(seed=12, fonts="training", size=(1600, 1200))
    maps, ours = {}, []
    for index in range(args.pages):
        crowded = index % 2 == 1
        page = synth.page(words=args.words if crowded else None, layout="scene" if crowded else None)
        decoded = decode_page(page.encoded(), PageSettings().images)
        pixels, scale = detector_input(decoded.rgb)
        probability = detector(pixels)
        maps[str(index)] = probability
        find_boxes(probability[0, 0], scale, decoded.size)
        start = time.perf_counter()
        boxes = find_boxes(probability[0, 0], scale, decoded.size)
        ours.append((time.perf_counter() - start, len(boxes)))
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(Path(tmp, "maps.npz"), **maps)
        command = [str(ROOT / ".venv-rapidocr/bin/python"), str(ROOT / "scripts/peers/rapidocr_boxes.py"),
                   str(Path(tmp, "maps.npz"))]
        theirs = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    mean_ours = 1e3 * np.mean([s for s, _ in ours])
    mean_theirs = 1e3 * np.mean(theirs["seconds"])
    widest = max(m.shape[3] for m in maps.values())
    print(f"{args.pages} pages ({args.pages // 2} with {args.words} words), maps up to {widest} pixels wide")
    print(f"find_boxes:          {mean_ours:6.2f} ms per page, {sum(b for _, b in ours)} boxes")
    print(f"RapidOCR's DB post:  {mean_theirs:6.2f} ms per page, {sum(theirs['boxes'])} boxes")
    print(f"ratio: {mean_theirs / mean_ours:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
