"""Scoring what a reader of whole images found against what a page holds: detection and end-to-end figures.

A found box matches a true word where their bounding rectangles overlap with IoU >= 0.5, one to one, the best
overlaps first; a match reads right where the texts are equal, lower-cased over 0-9a-z.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .text import ALPHABET

MIN_IOU = 0.5


def bounding_rectangles(corners: np.ndarray) -> np.ndarray:
    """``[N, 4, 2]`` corners -> ``[N, 4]`` (left, top, right, bottom)."""
    corners = np.asarray(corners, np.float64).reshape(-1, 4, 2)
    return np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every rectangle of ``a`` ``[N, 4]`` with every one of ``b`` ``[M, 4]``."""
    left, top = np.maximum(a[:, None, 0], b[None, :, 0]), np.maximum(a[:, None, 1], b[None, :, 1])
    right, bottom = np.minimum(a[:, None, 2], b[None, :, 2]), np.minimum(a[:, None, 3], b[None, :, 3])
    overlap = np.clip(right - left, 0, None) * np.clip(bottom - top, 0, None)
    area = lambda r: (r[:, 2] - r[:, 0]) * (r[:, 3] - r[:, 1])  # noqa: E731
    return overlap / np.maximum(area(a)[:, None] + area(b)[None, :] - overlap, 1e-9)


def match(truth: np.ndarray, found: np.ndarray) -> list[tuple[int, int]]:
    """Pairs (true word, found box) with IoU >= ``MIN_IOU``, one to one, the best overlaps first."""
    if len(truth) == 0 or len(found) == 0:
        return []
    iou = iou_matrix(bounding_rectangles(truth), bounding_rectangles(found))
    pairs, used_truth, used_found = [], set(), set()
    for flat in np.argsort(-iou, axis=None, kind="stable"):
        i, j = divmod(int(flat), iou.shape[1])
        if iou[i, j] < MIN_IOU:
            break
        if i not in used_truth and j not in used_found:
            pairs.append((i, j))
            used_truth.add(i)
            used_found.add(j)
    return pairs


def comparable(text: str) -> str:
    """Lower case, 0-9a-z only: what the recogniser's alphabet can say."""
    return "".join(ch for ch in text.lower() if ch in ALPHABET)


@dataclass
class PageCounts:
    """Running counts over pages: true words, found boxes, matched boxes, and matched boxes read right."""

    truth: int = 0
    found: int = 0
    matched: int = 0
    read: int = 0

    def add(self, truth_corners: np.ndarray, truth_texts: Sequence[str], found_corners: np.ndarray,
            found_texts: Sequence[str]) -> None:
        pairs = match(np.asarray(truth_corners), np.asarray(found_corners))
        self.truth += len(truth_texts)
        self.found += len(found_texts)
        self.matched += len(pairs)
        self.read += sum(comparable(truth_texts[i]) == comparable(found_texts[j]) for i, j in pairs)

    def __iadd__(self, other: PageCounts) -> PageCounts:
        self.truth, self.found = self.truth + other.truth, self.found + other.found
        self.matched, self.read = self.matched + other.matched, self.read + other.read
        return self

    @staticmethod
    def _f1(hits: int, truth: int, found: int) -> float:
        return 2 * hits / (truth + found) if truth + found else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.truth if self.truth else 1.0

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else 1.0

    @property
    def detection_f1(self) -> float:
        return self._f1(self.matched, self.truth, self.found)

    @property
    def end_to_end_f1(self) -> float:
        return self._f1(self.read, self.truth, self.found)
