"""Scores of readings against the truth."""

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
    assert 0 < difference.margin < 1


def test_readers_that_agree_on_every_line_differ_by_nothing_surely():
    truths = ["ab", "cd", "ef"]
    difference = paired_difference(["ab", "xx", "ef"], ["ab", "xx", "ef"], truths)
    assert difference.difference == 0 and difference.margin == 0
