"""How well readings match the truth: word accuracy and character error rate, and two readers compared line by line."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


def _distance_table(a: str, b: str) -> list[list[int]]:
    """``table[i][j]``: the edit distance between ``a[:i]`` and ``b[:j]``."""
    table = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            row.append(min(table[i - 1][j] + 1, row[j - 1] + 1, table[i - 1][j - 1] + (ca != cb)))
        table.append(row)
    return table


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions turning ``a`` into ``b``."""
    return _distance_table(a, b)[-1][-1]


def edits(reading: str, truth: str) -> list[tuple[str, str]]:
    """The character edits turning ``truth`` into ``reading``, in order, along one shortest alignment (walked back
    from the ends, a substitution preferred): ``(t, r)`` for a character ``t`` read as ``r``, ``(t, "")`` for one
    missed and ``("", r)`` for one read that is not there."""
    table = _distance_table(truth, reading)
    found, i, j = [], len(truth), len(reading)
    while i or j:
        if i and j and table[i][j] == table[i - 1][j - 1] + (truth[i - 1] != reading[j - 1]):
            if truth[i - 1] != reading[j - 1]:
                found.append((truth[i - 1], reading[j - 1]))
            i, j = i - 1, j - 1
        elif i and table[i][j] == table[i - 1][j] + 1:
            found.append((truth[i - 1], ""))
            i -= 1
        else:
            found.append(("", reading[j - 1]))
            j -= 1
    return found[::-1]


def confusions(readings: Sequence[str], truths: Sequence[str]) -> Counter[tuple[str, str]]:
    """How often each character edit (``edits``) turns a truth into its reading, over all lines: which characters a
    reader takes for which."""
    _check_paired(readings, truths)
    return Counter(edit for r, t in zip(readings, truths) if r != t for edit in edits(r, t))


@dataclass(frozen=True)
class Scores:
    lines: int
    word_accuracy: float
    """Fraction of lines read exactly."""
    cer: float
    """Character error rate: edit distance over the characters of the truth, summed over lines."""

    def __str__(self) -> str:
        return f"{self.lines} lines: word accuracy {self.word_accuracy:.2%}, CER {self.cer:.2%}"


def _check_paired(readings: Sequence[str], truths: Sequence[str]) -> None:
    if len(readings) != len(truths):
        raise ValueError(f"{len(readings)} readings for {len(truths)} truths")


def score(readings: Sequence[str], truths: Sequence[str]) -> Scores:
    _check_paired(readings, truths)
    exact = sum(r == t for r, t in zip(readings, truths))
    errors = sum(edit_distance(r, t) for r, t in zip(readings, truths))
    characters = sum(len(t) for t in truths)
    return Scores(len(truths), exact / max(1, len(truths)), errors / max(1, characters))


LOOK_ALIKES = str.maketrans({"o": "0", "i": "1", "l": "1"})
"""Characters many faces draw alike once lower-cased: O and 0; I, l and 1 (the ones Crockford's Base32 leaves out).
In a code of random characters nothing else tells them apart, so no reader can always be right."""


def look_alike_accuracy(readings: Sequence[str], truths: Sequence[str]) -> float:
    """Word accuracy when ``LOOK_ALIKES`` count as one character: how many mistakes only they explain."""
    _check_paired(readings, truths)
    same = sum(r.translate(LOOK_ALIKES) == t.translate(LOOK_ALIKES) for r, t in zip(readings, truths))
    return same / max(1, len(truths))


@dataclass(frozen=True)
class PairedDifference:
    """Two readers' word accuracy on the same lines, compared line by line."""

    lines: int
    only_first: int
    """Lines the first reads exactly and the second does not."""
    only_second: int
    """Lines the second reads exactly and the first does not."""

    @property
    def difference(self) -> float:
        """The first's word accuracy less the second's."""
        return (self.only_first - self.only_second) / self.lines  # at least 2: __post_init__

    @property
    def margin(self) -> float:
        """Half the 95 % interval of ``difference`` (normal approximation over lines scored +1, 0 or -1). Only the
        lines one reads and the other does not spread it, so the same lines read by both tell two weights apart
        far more surely than each weight's accuracy on its own lines would; with a handful of such lines or none
        it claims more certainty than they give."""
        spread = (self.only_first + self.only_second) / self.lines - self.difference ** 2
        return 1.96 * math.sqrt(max(0.0, spread) / (self.lines - 1))

    def __post_init__(self) -> None:
        if self.lines < 2:
            raise ValueError(f"a difference between two readers needs at least 2 lines, got {self.lines}")


def paired_difference(first: Sequence[str], second: Sequence[str], truths: Sequence[str]) -> PairedDifference:
    """How much more often ``first`` reads ``truths`` exactly than ``second`` does."""
    _check_paired(first, truths)
    _check_paired(second, truths)
    only_first = sum(a == t != b for a, b, t in zip(first, second, truths))
    only_second = sum(b == t != a for a, b, t in zip(first, second, truths))
    return PairedDifference(len(truths), only_first, only_second)
