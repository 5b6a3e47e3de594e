"""Scores of readings against the truth."""

import math
import random
import statistics
from collections import Counter

import pytest

from str_ocr.metrics import confusions, edit_distance, edits, look_alike_accuracy, paired_difference, score


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


@pytest.mark.parametrize("truth, reading, expected", [
    ("b70fi", "b7ofl", [("0", "o"), ("i", "l")]),
    ("abc", "ac", [("b", "")]),
    ("ac", "abc", [("", "b")]),
    ("", "ab", [("", "a"), ("", "b")]),
    ("ab", "", [("a", ""), ("b", "")]),
    ("same", "same", []),
])
def test_edits_name_each_character_read_wrong_missed_or_added(truth, reading, expected):
    assert edits(reading, truth) == expected


def test_edits_are_as_many_as_the_edit_distance_and_turn_the_truth_into_the_reading():
    rng = random.Random(1)
    for _ in range(500):
        truth, reading = ("".join(rng.choice("ab0o1l") for _ in range(rng.randint(0, 8))) for _ in range(2))
        found = edits(reading, truth)
        assert len(found) == edit_distance(truth, reading)
        taken, put = Counter(t for t, _ in found if t), Counter(r for _, r in found if r)
        assert Counter(truth) - taken + put == Counter(reading)  # the characters no edit names are read as they are


def test_confusions_count_edits_over_the_misread_lines():
    counted = confusions(["xo", "o1", "ab", "c"], ["x0", "01", "ab", "cd"])
    assert counted == {("0", "o"): 2, ("d", ""): 1}


def test_confusions_need_a_reading_per_truth():
    with pytest.raises(ValueError, match="1 readings for 2 truths"):
        confusions(["a"], ["a", "b"])
