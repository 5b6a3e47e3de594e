"""RapidOCR (PP-OCRv4 detection and recognition, its PyPI package's weights) reading whole images, in-process.

Runs inside its own virtualenv (`make .venv-rapidocr`), so it imports nothing of this project:

    .venv-rapidocr/bin/python scripts/peers/rapidocr_pages.py --threads 1 page1.png page2.jpg ...

Prints one JSON object per image: {"file", "seconds", "words": [[corners, text, score], ...]}. RapidOCR reads
lines, spaces included; each line is cut into its words with the character boxes it returns (``return_word_box``),
so that its answers are scored word by word, as ocr_page's are.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from rapidocr_onnxruntime import RapidOCR


def words_of_line(box, text, score, char_boxes, chars):
    """The words of one line: (corners, text, score) each; the line itself where it holds no space."""
    if " " not in text.strip() or not char_boxes or len(char_boxes) != len(chars):
        return [(box, text.strip(), score)]
    words, current = [], []
    for char_box, char in zip(char_boxes, chars):
        if char.strip():
            current.append((char_box, char))
        elif current:
            words.append(current)
            current = []
    if current:
        words.append(current)
    return [([w[0][0][0], w[-1][0][1], w[-1][0][2], w[0][0][3]], "".join(c for _, c in w), score) for w in words]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads (default %(default)s)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    engine = RapidOCR(intra_op_num_threads=args.threads, inter_op_num_threads=1)
    engine(args.files[0])  # the first call pays for allocations
    for path in args.files:
        start = time.perf_counter()
        result, _ = engine(path, return_word_box=True)
        seconds = time.perf_counter() - start
        words = []
        for box, text, score, *chars in result or []:
            char_boxes, char_texts = (chars[0], chars[1]) if len(chars) >= 2 else ([], [])
            words += words_of_line(box, text, score, char_boxes, char_texts)
        print(json.dumps({"file": path, "seconds": seconds,
                          "words": [[[list(map(float, p)) for p in corners], text, float(score)]
                                    for corners, text, score in words]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
