from pathlib import Path

import pytest
import torch

from str_ocr import MIN_WIDTH, NUM_CLASSES, STRModel, output_length
from str_ocr.model import ContextLayer, FrameContext, dark_text_on_light

from .test_ragged import with_trained_context

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


def test_context_layers_cannot_be_negative():
    with pytest.raises(ValueError, match="context_layers must be 0"):
        STRModel(output_channels=32, context_layers=-1)


def test_output_channels_must_divide_into_the_stem():
    with pytest.raises(ValueError, match="multiple of 16"):
        STRModel(output_channels=100)


def test_small_model_is_a_scaled_tutorial_model():
    small = sum(p.numel() for p in STRModel(output_channels=64).parameters())
    large = sum(p.numel() for p in STRModel(output_channels=512).parameters())
    assert 600_000 < small < 800_000
    assert 40_000_000 < large < 50_000_000


def low_contrast_line(width: int = 60) -> torch.Tensor:
    """Dark ink (0.5) on a light ground (0.9), a tenth of the pixels ink."""
    line = torch.full((1, 1, 32, width), 0.9)
    line[..., 10:14, ::2] = 0.5
    line[..., 20:22, :] = 0.5
    return line


def test_light_text_on_dark_is_negated_and_dark_on_light_kept():
    line = low_contrast_line()
    torch.testing.assert_close(dark_text_on_light(line), line)
    torch.testing.assert_close(dark_text_on_light(-line), line)
    both = torch.cat([line, -line])
    torch.testing.assert_close(dark_text_on_light(both), torch.cat([line, line]))


def test_padding_does_not_decide_the_polarity():
    line = low_contrast_line(60)
    padded = torch.nn.functional.pad(line, (0, 180))
    assert dark_text_on_light(padded)[0, 0, 0, 0] < 0  # unmasked, the zero columns make the ground look dark
    torch.testing.assert_close(dark_text_on_light(padded, torch.tensor([60])), padded)


def test_a_line_and_its_negative_read_alike():
    torch.manual_seed(0)
    model = STRModel(output_channels=32).eval()
    line = low_contrast_line(100)
    with torch.inference_mode():
        torch.testing.assert_close(model(-line), model(line))


def test_a_context_layer_computes_what_torchs_encoder_layer_computes_and_loads_its_weights():
    torch.manual_seed(4)
    theirs = torch.nn.TransformerEncoderLayer(32, 4, 128, dropout=0.0, batch_first=True, norm_first=True).eval()
    ours = ContextLayer(32, 4, 128).eval()
    ours.load_state_dict(theirs.state_dict())
    frames, lengths = torch.randn(3, 20, 32), torch.tensor([20, 7, 1])
    padding = torch.arange(20)[None, :] >= lengths[:, None]
    with torch.no_grad():
        expected, got = theirs(frames, src_key_padding_mask=padding), ours(frames, padding)
    for line, length in enumerate(lengths.tolist()):
        torch.testing.assert_close(got[line, :length], expected[line, :length], rtol=1e-4, atol=1e-5)


def test_an_untrained_frame_context_is_the_identity_so_weights_read_as_without_it():
    torch.manual_seed(5)
    plain = STRModel(output_channels=32).eval()
    with_context = STRModel(output_channels=32, context_layers=2).eval()
    with_context.load_state_dict(plain.state_dict(), strict=False)
    x = torch.randn(2, 1, 32, 60)
    with torch.no_grad():
        torch.testing.assert_close(with_context(x, torch.tensor([60, 31])), plain(x, torch.tensor([60, 31])))
    assert isinstance(with_context.SequenceModeling, FrameContext) and plain.SequenceModeling is None


def test_a_frame_reads_its_neighbours_through_the_context():
    torch.manual_seed(6)
    model = with_trained_context(STRModel(output_channels=32, context_layers=1).eval())
    line = torch.randn(1, 1, 32, 200)
    changed = line.clone()
    changed[..., 150:] = torch.randn(1, 1, 32, 50)  # far beyond the first frame's receptive field
    with torch.no_grad():
        first, second = model(line)[0, 0], model(changed)[0, 0]
        plain = STRModel(output_channels=32).eval()
        plain.load_state_dict(model.state_dict(), strict=False)
        assert torch.equal(plain(line)[0, 0], plain(changed)[0, 0])
    assert (first - second).abs().max() > 1e-3
