import numpy as np
import pytest
import torch

from str_ocr import InputError, LineLimits, Recognizer, STRModel, output_length
from str_ocr.recognizer import ClampedLines


@pytest.fixture(scope="module")
def recognizer():
    torch.manual_seed(0)
    return Recognizer(STRModel(output_channels=32), limits=LineLimits(min_width=8, max_width=400))


def lines(n: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, 1, 32, width)).astype(np.float32)


def alone(recognizer, request):
    (result,) = recognizer([request])
    return result


def test_each_request_gets_its_own_logits(recognizer):
    requests = [lines(2, 100, 1), lines(1, 100, 2), lines(3, 100, 3)]
    results = recognizer(requests)
    for request, result in zip(requests, results):
        assert result.shape == (request.shape[0], 26, 37)
        torch.testing.assert_close(result, alone(recognizer, request), rtol=1e-4, atol=1e-4)


def test_bad_requests_fail_alone_and_their_batch_mates_are_answered(recognizer):
    requests = [
        lines(1, 100, 1),
        lines(1, 100).astype(np.float64),  # wrong dtype
        lines(1, 100)[:, :, :31],  # wrong height
        lines(1, 4),  # below this model's min_width
        lines(1, 401),  # above its max_width
        np.zeros((0, 1, 32, 100), np.float32),  # no lines
        lines(2, 100, 6),
    ]
    results = recognizer(requests)
    assert [type(r).__name__ for r in results] == ["Tensor"] + ["InputError"] * 5 + ["Tensor"]
    assert "FP32" in str(results[1]) and "float64" in str(results[1])
    assert "[1, 1, 31, 100]" in str(results[2])
    assert "from 8 to 400" in str(results[3]) and "401 pixels wide" in str(results[4])
    torch.testing.assert_close(results[0], alone(recognizer, requests[0]), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(results[6], alone(recognizer, requests[6]), rtol=1e-4, atol=1e-4)


def test_values_outside_the_normalised_range_are_clamped_and_counted(recognizer):
    nan, inf, huge, fine = lines(1, 100, 4), lines(2, 100, 5), lines(1, 100, 6), lines(1, 100, 7)
    nan[0, 0, 5, 7] = np.nan
    inf[1, 0, 0, 0], inf[1, 0, 0, 1] = np.inf, -np.inf
    huge[0, 0, 3, :] = 3e38
    before = recognizer.clamped
    results = recognizer([fine, nan, inf, huge])
    assert all(torch.isfinite(r).all() for r in results)
    assert recognizer.clamped - before == ClampedLines(nonfinite=2, out_of_range=1)
    cleaned = [np.clip(np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0), -1, 1) for x in (nan, inf, huge)]
    for result, expected in zip(results[1:], cleaned):
        torch.testing.assert_close(result, alone(recognizer, expected), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(results[0], alone(recognizer, fine), rtol=1e-4, atol=1e-4)


def test_mixed_widths_come_back_at_their_own_length(recognizer):
    widths = [40, 100, 44, 300, 100]
    results = recognizer([lines(1, w, i) for i, w in enumerate(widths)])
    assert [r.shape[1] for r in results] == [output_length(w) for w in widths]


def test_a_failing_forward_pass_fails_only_its_requests():
    class Broken(STRModel):
        def forward(self, x, widths=None):
            if x.shape[-1] > 200:
                raise RuntimeError("out of memory")
            return super().forward(x, widths)

    recognizer = Recognizer(Broken(output_channels=32), max_padding=0)
    results = recognizer([lines(1, 100), lines(1, 300), lines(1, 100)])
    assert isinstance(results[1], RuntimeError) and not isinstance(results[1], InputError)
    assert "out of memory" in str(results[1])
    assert isinstance(results[0], torch.Tensor) and isinstance(results[2], torch.Tensor)


def test_read_decodes_uint8_lines(recognizer):
    readings = recognizer.read([np.full((32, 100), 255, np.uint8), np.zeros((32, 60), np.uint8)])
    assert len(readings) == 2 and all(0 <= r.confidence <= 1 for r in readings)


def test_limits_are_checked():
    with pytest.raises(ValueError, match="at least 4"):
        LineLimits(min_width=2)
    with pytest.raises(ValueError, match="below min_width"):
        LineLimits(min_width=100, max_width=50)
