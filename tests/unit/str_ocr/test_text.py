import numpy as np
import pytest

from str_ocr import ALPHABET, BLANK, NUM_CLASSES, greedy_decode, greedy_decode_batch
from str_ocr.text import collapse, encode


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
