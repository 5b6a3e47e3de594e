"""Packing text lines of different widths into padded batches.

A batch tensor needs one width, so lines narrower than the widest in their batch are padded on
the right. Padding costs compute, so lines are sorted by width and cut into groups whose padded
area stays within ``max_padding`` of their real area: equal widths always share a batch, very
different widths do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Group:
    """Requests (by index) that run as one padded batch ``width`` pixels wide."""

    members: tuple[int, ...]
    width: int


def plan_groups(
    widths: Sequence[int],
    counts: Sequence[int],
    max_padding: float = 0.25,
    max_lines: int | None = None,
) -> list[Group]:
    """Group requests ``i`` (``counts[i]`` lines, each ``widths[i]`` wide) into padded batches.

    A group grows, in order of width, while its padded area stays within ``(1 + max_padding)``
    times the area of its lines and it holds at most ``max_lines`` lines (a request is never split).
    """
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    groups: list[Group] = []
    members: list[int] = []
    area = lines = 0
    for i in order:
        width, count = widths[i], counts[i]
        grown_lines, grown_area = lines + count, area + width * count
        fits = members and grown_lines * width <= (1 + max_padding) * grown_area
        fits = fits and (max_lines is None or grown_lines <= max_lines)
        if members and not fits:
            groups.append(Group(tuple(members), widths[members[-1]]))
            members, area, lines = [], 0, 0
            grown_lines, grown_area = count, width * count
        members.append(i)
        lines, area = grown_lines, grown_area
    if members:
        groups.append(Group(tuple(members), widths[members[-1]]))
    return groups


@dataclass(frozen=True)
class ColumnCounts:
    """Input columns run through the network: the lines' own (real), and all, padding included (computed)."""

    real: int = 0
    computed: int = 0

    def __add__(self, other: ColumnCounts) -> ColumnCounts:
        return ColumnCounts(self.real + other.real, self.computed + other.computed)

    def __sub__(self, other: ColumnCounts) -> ColumnCounts:
        return ColumnCounts(self.real - other.real, self.computed - other.computed)

    @property
    def padding(self) -> int:
        return self.computed - self.real

    @property
    def padding_waste(self) -> float:
        """Fraction of the computed columns that are padding (0 when every group has one width)."""
        return self.padding / self.computed if self.computed else 0.0


def column_counts(groups: Sequence[Group], widths: Sequence[int], counts: Sequence[int]) -> ColumnCounts:
    """The columns ``groups`` compute for requests of ``widths`` with ``counts`` lines each."""
    members = [(g.width, i) for g in groups for i in g.members]
    return ColumnCounts(sum(widths[i] * counts[i] for _, i in members), sum(w * counts[i] for w, i in members))


def padding_waste(groups: Sequence[Group], widths: Sequence[int], counts: Sequence[int]) -> float:
    """Fraction of the computed columns that are padding (0 when every group has one width)."""
    return column_counts(groups, widths, counts).padding_waste


def pad_to_width(lines: torch.Tensor, width: int) -> torch.Tensor:
    """Right-pad ``[N, C, H, w]`` with zeros to ``width`` columns.

    Zero is what the network's own convolutions pad a line with; with the line's real width passed
    to ``STRModel`` (which masks every later layer), padding leaves the line's logits unchanged.
    """
    missing = width - lines.shape[-1]
    return lines if missing <= 0 else F.pad(lines, (0, missing))


def stack_padded(requests: Sequence[torch.Tensor], width: int) -> torch.Tensor:
    """One ``[sum N_i, C, H, width]`` batch from requests ``[N_i, C, H, w_i]`` on the same device."""
    return torch.cat([pad_to_width(r, width) for r in requests], dim=0)
