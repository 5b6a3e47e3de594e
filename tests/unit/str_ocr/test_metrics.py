"""Scores of readings against the truth."""

import pytest

from str_ocr.metrics import look_alike_accuracy, score


def test_look_alikes_count_as_one_only_among_themselves():
    truths = ["o1l", "0il", "abc", "abc"]
    readings = ["01i", "oli", "abd", "ab"]
    assert score(readings, truths).word_accuracy == 0
    assert look_alike_accuracy(readings, truths) == 0.5


def test_look_alike_accuracy_needs_a_reading_per_truth():
    with pytest.raises(ValueError, match="2 readings for 1 truths"):
        look_alike_accuracy(["a", "b"], ["a"])
