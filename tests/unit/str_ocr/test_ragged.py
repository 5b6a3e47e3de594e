"""Lines of different widths in one padded batch read exactly as they do alone."""

import pytest
import torch

from str_ocr import Recognizer, STRModel, load_model, normalize, output_length
from str_ocr.model import column_mask
from str_ocr.packing import Group, padding_waste, plan_groups
from str_ocr.synth import TextLineSynth
from str_ocr_triton.config import served_weights

# Measured with the shipped weights over 200 generated lines of 20 to 600 pixels (tests below):
# float rounding only, since the padded columns never reach a line's own activations.
LOGIT_TOLERANCE = 1e-3
# On a GPU, convolutions run in TF32 and pick algorithms by batch size: logits differ from the CPU's by up to 0.085
# (measured on an H100, 48 generated lines, weights without attention layers); readings must still be identical.
GPU_LOGIT_TOLERANCE = 0.15
# In bf16 (OpenVINO's, on a CPU that has it) a logit near 14 moves in steps of 0.06, and the engine picks kernels by
# shape: served batched and alone, lines differed by up to 0.016 (64 generated lines, an EPYC with avx512_bf16,
# weights without attention layers) and by up to 0.033 with round 22's attention layers (60 lines, the same CPU).
BF16_LOGIT_TOLERANCE = 0.15


def logit_tolerance(device_kind: str, precision: str = "f32") -> float:
    """The tolerance for logits computed by an instance of ``device_kind`` ("KIND_CPU"/"KIND_GPU", "cpu"/"cuda") in
    ``precision`` (f32 or bf16)."""
    if device_kind.upper().removeprefix("KIND_") in ("GPU", "CUDA"):
        return GPU_LOGIT_TOLERANCE
    return BF16_LOGIT_TOLERANCE if precision == "bf16" else LOGIT_TOLERANCE


def with_trained_context(model: STRModel, seed: int = 0) -> STRModel:
    """``model`` with its ``FrameContext``'s zero-initialised branches (the identity) drawn at random, as training
    would leave them, so that the attention changes what the classifier reads."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in model.SequenceModeling.layers:
            for projection in (layer.self_attn.out_proj, layer.linear2):
                projection.weight.copy_(torch.randn(projection.weight.shape, generator=generator) * 0.2)
    return model


@pytest.mark.parametrize("context_layers", [0, 2])
def test_masked_forward_equals_each_line_alone(context_layers):
    torch.manual_seed(0)
    model = STRModel(output_channels=32, context_layers=context_layers).eval()
    if context_layers:
        with_trained_context(model)
    widths = [4, 5, 37, 100, 101, 102, 103, 250]
    lines = [torch.randn(1, 1, 32, w) for w in widths]
    batch = torch.cat([torch.nn.functional.pad(x, (0, 260 - x.shape[-1])) for x in lines])
    with torch.inference_mode():
        packed = model(batch, torch.tensor(widths))
        for i, (x, w) in enumerate(zip(lines, widths)):
            torch.testing.assert_close(packed[i, : output_length(w)], model(x)[0], rtol=0, atol=1e-4)


def test_without_the_mask_padding_would_change_the_logits():
    model = load_model(*served_weights())
    line = torch.from_numpy(normalize(TextLineSynth(seed=3).sample().image))[None, None]
    width = line.shape[-1]
    padded = torch.nn.functional.pad(line, (0, 50))
    with torch.inference_mode():
        alone, unmasked = model(line)[0], model(padded)[0, : output_length(width)]
    assert (alone - unmasked).abs().max() > 100 * LOGIT_TOLERANCE


def test_column_mask():
    mask = column_mask(torch.tensor([1, 3]), 4, torch.float32)
    assert mask.shape == (2, 1, 1, 4)
    assert mask.flatten(1).tolist() == [[1, 0, 0, 0], [1, 1, 1, 0]]


@pytest.fixture(scope="module")
def generated_lines():
    synth = TextLineSynth(seed=99)
    return [synth.sample() for _ in range(200)]


@pytest.mark.parametrize("max_padding", [0.25, 10.0])
def test_shipped_weights_read_packed_lines_as_alone(generated_lines, max_padding):
    model = load_model(*served_weights())
    requests = [normalize(s.image)[None, None] for s in generated_lines]
    packed = Recognizer(model, max_padding=max_padding, max_lines=64)(requests)
    alone = Recognizer(model, max_padding=0)
    worst = 0.0
    for request, logits in zip(requests, packed):
        reference = alone([request])[0]
        worst = max(worst, float((logits - reference).abs().max()))
    assert worst <= LOGIT_TOLERANCE
    texts = Recognizer(model, max_padding=max_padding).read([s.image for s in generated_lines])
    assert [r.text for r in texts] == [r.text for r in alone.read([s.image for s in generated_lines])]


def test_sorting_by_width_keeps_padding_waste_small(generated_lines):
    widths = [s.image.shape[1] for s in generated_lines]
    counts = [1] * len(widths)
    assert min(widths) < 60 and max(widths) > 350
    grouped = padding_waste(plan_groups(widths, counts, max_padding=0.25, max_lines=16), widths, counts)
    # What a packer that pads each batch of 16 as the lines arrive would compute:
    arrival = [Group(tuple(range(i, min(i + 16, len(widths)))), max(widths[i : i + 16]))
               for i in range(0, len(widths), 16)]
    naive = padding_waste(arrival, widths, counts)
    # A group's padded area is at most 1.25 times its lines' area: at most 20% of its columns are padding.
    assert grouped <= 0.2 and grouped < naive / 3
