"""The alphabet the recogniser reads, and greedy CTC decoding of its logits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
"""Characters of classes 1..36; class 0 is the CTC blank."""

BLANK = 0
NUM_CLASSES = len(ALPHABET) + 1


@dataclass(frozen=True)
class Reading:
    """What a line says, and the probability of the greedy CTC path that says it."""

    text: str
    confidence: float


def encode(text: str) -> list[int]:
    """Class indices of ``text`` (lower-cased); raises ``ValueError`` on a character outside the alphabet."""
    unknown = sorted(set(text.lower()) - set(ALPHABET))
    if unknown:
        raise ValueError(f"characters {unknown!r} are not in the alphabet {ALPHABET!r}")
    return [ALPHABET.index(ch) + 1 for ch in text.lower()]


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = logits - logits.max(axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)


def collapse(path: np.ndarray) -> str:
    """The text of a CTC path: merge repeated classes, then drop blanks ("aa-ab" -> "aab")."""
    keep = np.ones(len(path), dtype=bool)
    keep[1:] = path[1:] != path[:-1]
    return "".join(ALPHABET[c - 1] for c in path[keep] if c != BLANK)


def greedy_decode(logits: np.ndarray) -> Reading:
    """Decode one line's logits ``[T, 37]`` with best-path (greedy) CTC decoding.

    The confidence is the product over time steps of the winning class's probability: the
    probability of the decoded path, as in deep-text-recognition-benchmark.
    """
    if logits.ndim != 2 or logits.shape[1] != NUM_CLASSES:
        raise ValueError(f"expected logits of shape [T, {NUM_CLASSES}], got {list(logits.shape)}")
    probabilities = softmax(logits.astype(np.float64))
    path = probabilities.argmax(axis=1)
    confidence = float(np.prod(probabilities[np.arange(len(path)), path]))
    return Reading(collapse(path), confidence)


def greedy_decode_batch(logits: np.ndarray) -> list[Reading]:
    """Decode ``[N, T, 37]`` logits, one reading per line."""
    return [greedy_decode(line) for line in logits]


def read_logits(logits: np.ndarray, max_steps: int) -> list[Reading]:
    """Decode a client's ``[N, T, 37]`` logits, after checking them as any request: ``InputError`` for a
    wrong shape, more time steps than the recogniser ever gives (``max_steps``), or a non-finite value."""
    if logits.ndim != 3 or logits.shape[2] != NUM_CLASSES:
        raise InputError(f"LOGITS must be [batch, time steps, {NUM_CLASSES}]; got {list(logits.shape)}")
    if not 1 <= logits.shape[1] <= max_steps:
        raise InputError(f"LOGITS has {logits.shape[1]} time steps; the recogniser gives 1 to {max_steps}")
    if not np.isfinite(logits).all():
        raise InputError("LOGITS contains NaN or infinite values")
    return greedy_decode_batch(logits)
