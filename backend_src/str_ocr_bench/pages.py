"""Whole images read by the served ``ocr_page`` and by RapidOCR, on the same generated pages, in one run.

Pages come from ``str_ocr.synth.PageSynth`` and are written to files, so that every reader gets the same bytes.
Each reader's words are scored with ``str_ocr.page_scores``: detection recall, precision and F1 (bounding
rectangles at IoU >= 0.5, one to one) and end-to-end F1 (matched and read right, lower case 0-9a-z), over all
pages, by background, by layout, and by face (recall and end-to-end recall of the words drawn in it).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from str_ocr.contract import OCR_PAGE
from str_ocr.page_scores import PageCounts, match
from str_ocr.synth import PageSynth, SynthPage
from str_ocr_client.requests import page_inputs, words_of
from str_ocr_client.sending import infer_each_now

RAPIDOCR_PYTHON = Path(".venv-rapidocr/bin/python")
RAPIDOCR_RUNNER = Path(__file__).parents[2] / "scripts" / "peers" / "rapidocr_pages.py"


@dataclass(frozen=True)
class Answer:
    """One reader's words on one page: corners ``[N, 4, 2]``, texts, and the seconds it took (None: an error)."""

    corners: np.ndarray
    texts: list[str]
    seconds: float | None


def write_pages(folder: Path, count: int, seed: int, fonts: str) -> list[tuple[Path, SynthPage]]:
    """``count`` generated pages, each saved as ``folder/NNN.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    synth = PageSynth(seed=seed, fonts=fonts)
    pages = []
    for index in tqdm(range(count), desc="drawing pages", unit="page", leave=False):
        page = synth.page()
        path = folder / f"{index:03d}.png"
        path.write_bytes(page.encoded())
        pages.append((path, page))
    return pages


def read_served(url: str, files: Sequence[Path], concurrency: int = 8) -> list[Answer]:
    """ocr_page's words for each file, each page its own request, ``concurrency`` in flight."""
    outcomes = infer_each_now(url, OCR_PAGE, [page_inputs(path.read_bytes()) for path in files], concurrency)
    answers = []
    for outcome in outcomes:
        words = words_of(outcome.result) if outcome.ok else []
        answers.append(Answer(np.array([w.corners for w in words]).reshape(-1, 4, 2), [w.text for w in words],
                              outcome.seconds if outcome.ok else None))
    return answers


def read_rapidocr(files: Sequence[Path], threads: int = 1, python: Path = RAPIDOCR_PYTHON) -> list[Answer]:
    """RapidOCR's words for each file, read in-process in its own virtualenv with ``threads`` threads."""
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: run `make peers` to install RapidOCR in its own virtualenv")
    command = [str(python), str(RAPIDOCR_RUNNER), "--threads", str(threads), *map(str, files)]
    lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
    answers = []
    for line in lines:
        result = json.loads(line)
        corners = np.array([w[0] for w in result["words"]], np.float32).reshape(-1, 4, 2)
        answers.append(Answer(corners, [w[1] for w in result["words"]], result["seconds"]))
    return answers


def score(pages: Sequence[SynthPage], answers: Sequence[Answer]) -> dict[str, PageCounts]:
    """Counts over all pages (``all``), by background (``background=...``), by layout (``layout=scene`` or
    ``document``) and by face (``face=...``: the truth words of that face, the boxes matched to them)."""
    counts: dict[str, PageCounts] = defaultdict(PageCounts)
    for page, answer in zip(pages, answers):
        truth = np.stack([w.corners for w in page.words]) if page.words else np.zeros((0, 4, 2))
        texts = [w.text for w in page.words]
        for key in ("all", f"background={page.background}", f"layout={page.layout}"):
            counts[key].add(truth, texts, answer.corners, answer.texts)
        pairs = dict(match(truth, answer.corners))
        for index, word in enumerate(page.words):
            face = counts[f"face={word.face.stem}"]
            found = [pairs[index]] if index in pairs else []
            face.add(truth[index:index + 1], [word.text], answer.corners[found], [answer.texts[j] for j in found])
    return dict(counts)


def evaluate(url: str, pages: Sequence[tuple[Path, SynthPage]], peers: Sequence[str] = ("rapidocr",),
             concurrency: int = 8) -> dict[str, dict]:
    """Each reader's counts and speed: ``ocr_page`` at ``concurrency`` pages in flight, peers one page at a time
    on one thread."""
    files = [path for path, _ in pages]
    readers = {}
    start = time.perf_counter()
    served = read_served(url, files, concurrency)
    readers[OCR_PAGE] = (served, len(files) / (time.perf_counter() - start))
    if "rapidocr" in peers:
        answers = read_rapidocr(files)
        readers["rapidocr"] = (answers, len(files) / sum(a.seconds for a in answers))
    return {name: {"counts": score([p for _, p in pages], answers), "pages_per_second": rate,
                   "errors": sum(a.seconds is None for a in answers)}
            for name, (answers, rate) in readers.items()}


def table(results: dict[str, dict]) -> str:
    """A markdown table: per reader and group, recall, precision, detection F1 and end-to-end F1."""
    rows = ["| reader | group | words | recall | precision | detection F1 | end-to-end F1 |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for reader, result in results.items():
        for group, c in sorted(result["counts"].items(), key=lambda item: (item[0] != "all", item[0])):
            if group.startswith("face="):
                rows.append(f"| {reader} | {group} | {c.truth} | {c.recall:.3f} | | | "
                            f"{c.read / c.truth if c.truth else 0:.3f} (read) |")
            else:
                rows.append(f"| {reader} | {group} | {c.truth} | {c.recall:.3f} | {c.precision:.3f} | "
                            f"{c.detection_f1:.3f} | {c.end_to_end_f1:.3f} |")
    return "\n".join(rows)
