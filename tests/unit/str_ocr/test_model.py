from pathlib import Path

import pytest
import torch

from str_ocr import MIN_WIDTH, NUM_CLASSES, STRModel, output_length

REFERENCE = Path(__file__).parents[2] / "data" / "str_checkpoint_keys.tsv"


def reference_shapes() -> dict[str, list[int]]:
    rows = [line.rstrip("\n").split("\t") for line in REFERENCE.read_text().splitlines() if not line.startswith("#")]
    return {key: [int(d) for d in shape.strip("[]").split(",") if d.strip()] for key, shape in rows}


def test_parameter_names_and_shapes_match_the_published_checkpoint():
    model = STRModel(output_channels=512)
    ours = {key: list(value.shape) for key, value in model.state_dict().items()}
    assert ours == reference_shapes()


@pytest.mark.parametrize("width", [MIN_WIDTH, 5, 7, 8, 31, 100, 257])
def test_output_is_one_time_step_per_four_columns(width):
    model = STRModel(output_channels=32).eval()
    with torch.inference_mode():
        logits = model(torch.randn(3, 1, 32, width))
    assert logits.shape == (3, output_length(width), NUM_CLASSES)
    assert output_length(width) == width // 4 + 1


def test_tutorial_input_gives_the_tutorial_output():
    with torch.inference_mode():
        assert STRModel(output_channels=64).eval()(torch.zeros(2, 1, 32, 100)).shape == (2, 26, 37)


def test_narrower_than_min_width_is_rejected_by_the_network():
    with pytest.raises(RuntimeError):
        STRModel(output_channels=32).eval()(torch.zeros(1, 1, 32, MIN_WIDTH - 1))


def test_output_channels_must_divide_into_the_stem():
    with pytest.raises(ValueError, match="multiple of 16"):
        STRModel(output_channels=100)


def test_small_model_is_a_scaled_tutorial_model():
    small = sum(p.numel() for p in STRModel(output_channels=64).parameters())
    large = sum(p.numel() for p in STRModel(output_channels=512).parameters())
    assert 600_000 < small < 800_000
    assert 40_000_000 < large < 50_000_000
