import numpy as np
import pytest

from str_ocr import ALPHABET, BLANK, NUM_CLASSES, greedy_decode, greedy_decode_batch
from str_ocr.errors import InputError
from str_ocr.text import collapse, encode, read_logits


def one_hot_logits(path: list[int], peak: float = 10.0) -> np.ndarray:
    logits = np.zeros((len(path), NUM_CLASSES), dtype=np.float32)
    logits[np.arange(len(path)), path] = peak
    return logits


def test_alphabet_and_blank():
    assert BLANK == 0 and NUM_CLASSES == 37
    assert ALPHABET == "0123456789abcdefghijklmnopqrstuvwxyz"


def test_encode_is_case_insensitive_and_rejects_unknown_characters():
    assert encode("Ab9") == [11, 12, 10]
    with pytest.raises(ValueError, match="not in the alphabet"):
        encode("a-b")


@pytest.mark.parametrize(
    "text, path",
    [
        ("", []),
        ("", [BLANK, BLANK]),
        ("a", [BLANK, 11, 11, BLANK]),
        ("aa", [11, BLANK, 11]),  # a blank separates a real repeat
        ("ab", [11, 11, 12, 12]),  # repeats merge
        ("hello", [18, 15, 22, 22, BLANK, 22, 25]),
    ],
)
def test_collapse_merges_repeats_then_drops_blanks(text, path):
    assert collapse(np.array(path, dtype=int)) == text


def test_greedy_decode_reads_the_best_path_with_its_probability():
    path = [BLANK] + [c + 1 for c in map(ALPHABET.index, "triton")] + [BLANK]
    reading = greedy_decode(one_hot_logits(path))
    assert reading.text == "triton"
    p = np.exp(10) / (np.exp(10) + NUM_CLASSES - 1)
    assert reading.confidence == pytest.approx(p ** len(path))


def test_confidence_drops_when_the_model_hesitates():
    sure = greedy_decode(one_hot_logits([11, BLANK], 10.0)).confidence
    unsure = greedy_decode(one_hot_logits([11, BLANK], 2.0)).confidence
    assert 0 < unsure < sure <= 1


def test_batch_decoding_and_shape_errors():
    batch = np.stack([one_hot_logits([11, BLANK]), one_hot_logits([12, 13])])
    assert [r.text for r in greedy_decode_batch(batch)] == ["a", "bc"]
    with pytest.raises(ValueError, match="shape"):
        greedy_decode(np.zeros((3, 36)))


def test_a_clients_logits_are_checked_like_any_request():
    good = np.zeros((2, 26, NUM_CLASSES), np.float32)
    assert [r.text for r in read_logits(good, max_steps=26)] == ["", ""]
    for bad, message in [
        (np.zeros((26, NUM_CLASSES), np.float32), "must be \\[batch, time steps, 37\\]; got \\[26, 37\\]"),
        (np.zeros((1, 26, 36), np.float32), "got \\[1, 26, 36\\]"),
        (np.zeros((1, 0, NUM_CLASSES), np.float32), "0 time steps; the recogniser gives 1 to 26"),
        (np.zeros((1, 27, NUM_CLASSES), np.float32), "27 time steps"),
    ]:
        with pytest.raises(InputError, match=message):
            read_logits(bad, max_steps=26)
    for value in (np.nan, np.inf, -np.inf):
        poisoned = good.copy()
        poisoned[1, 3, 5] = value
        with pytest.raises(InputError, match="NaN or infinite"):
            read_logits(poisoned, max_steps=26)
    # Finite but extreme values are read, with a confidence that stays a probability.
    (reading,) = read_logits(np.full((1, 26, NUM_CLASSES), 3e38, np.float32), max_steps=26)
    assert 0.0 <= reading.confidence <= 1.0
