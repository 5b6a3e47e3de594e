"""Scores of readings against the truth."""

import math
import statistics

import pytest

from str_ocr.metrics import look_alike_accuracy, paired_difference, score


def test_look_alikes_count_as_one_only_among_themselves():
    truths = ["o1l", "0il", "abc", "abc"]
    readings = ["01i", "oli", "abd", "ab"]
    assert score(readings, truths).word_accuracy == 0
    assert look_alike_accuracy(readings, truths) == 0.5


def test_look_alike_accuracy_needs_a_reading_per_truth():
    with pytest.raises(ValueError, match="2 readings for 1 truths"):
        look_alike_accuracy(["a", "b"], ["a"])


def test_a_paired_difference_counts_only_the_lines_one_reader_gets_right():
    truths = ["ab", "cd", "ef", "gh"]
    difference = paired_difference(["ab", "cd", "xx", "gh"], ["ab", "xx", "ef", "yy"], truths)
    assert (difference.only_first, difference.only_second, difference.lines) == (2, 1, 4)
    assert difference.difference == pytest.approx(0.25)
    per_line = [0, 1, -1, 1]  # +1 where only the first reads the line, -1 where only the second does
    assert difference.margin == pytest.approx(1.96 * statistics.stdev(per_line) / math.sqrt(len(per_line)))


def test_readers_that_agree_on_every_line_differ_by_nothing():
    difference = paired_difference(["ab", "xx", "ef"], ["ab", "xx", "ef"], ["ab", "cd", "ef"])
    assert difference.difference == 0 and difference.margin == 0


def test_a_difference_needs_two_lines():
    with pytest.raises(ValueError, match="at least 2 lines, got 1"):
        paired_difference(["a"], ["a"], ["a"])
