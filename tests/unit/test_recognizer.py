import numpy as np
import pytest
import torch

from str_ocr import InputError, LineLimits, Recognizer, STRModel, output_length


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
    nan = lines(1, 100, 4)
    nan[0, 0, 5, 7] = np.nan
    inf = lines(2, 100, 5)
    inf[1, 0, 0, 0] = np.inf
    requests = [
        lines(1, 100, 1),
        nan,
        lines(1, 100).astype(np.float64),  # wrong dtype
        lines(1, 100)[:, :, :31],  # wrong height
        lines(1, 4),  # below this model's min_width
        lines(1, 401),  # above its max_width
        np.zeros((0, 1, 32, 100), np.float32),  # no lines
        inf,
        lines(2, 100, 6),
    ]
    results = recognizer(requests)
    assert [type(r).__name__ for r in results] == ["Tensor"] + ["InputError"] * 7 + ["Tensor"]
    assert "NaN or infinite" in str(results[1]) and "NaN or infinite" in str(results[7])
    assert "FP32" in str(results[2]) and "float64" in str(results[2])
    assert "[1, 1, 31, 100]" in str(results[3])
    assert "from 8 to 400" in str(results[4]) and "401 pixels wide" in str(results[5])
    torch.testing.assert_close(results[0], alone(recognizer, requests[0]), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(results[8], alone(recognizer, requests[8]), rtol=1e-4, atol=1e-4)


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
