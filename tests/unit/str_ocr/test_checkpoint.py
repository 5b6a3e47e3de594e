import importlib.util
from pathlib import Path

import pytest
import torch

from str_ocr import CheckpointMismatchError, STRModel, load_model, save_checkpoint
from str_ocr.checkpoint import blend_weights, checkpoint_width, widen_weights


@pytest.fixture(scope="module")
def seeded_model():
    torch.manual_seed(1)
    model = STRModel(output_channels=32)
    # Non-default running statistics, so that a load that skipped buffers would show.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    return model.eval()


def forward(model, x):
    with torch.inference_mode():
        return model(x)


def test_plain_state_dict_round_trip(tmp_path, seeded_model):
    path = tmp_path / "plain.pth"
    save_checkpoint(seeded_model, path)
    assert not any(k.startswith("module.") for k in torch.load(path, weights_only=True))
    loaded = load_model(path, output_channels=32)
    assert not loaded.training
    x = torch.randn(2, 1, 32, 64)
    torch.testing.assert_close(forward(loaded, x), forward(seeded_model, x), rtol=0, atol=0)


def test_published_data_parallel_format(tmp_path, seeded_model):
    path = tmp_path / "published.pth"
    torch.save({f"module.{k}": v for k, v in seeded_model.state_dict().items()}, path)
    loaded = load_model(path, output_channels=32)
    x = torch.randn(1, 1, 32, 100)
    torch.testing.assert_close(forward(loaded, x), forward(seeded_model, x), rtol=0, atol=0)


def test_mismatch_names_missing_unexpected_and_misshaped_keys(tmp_path, seeded_model):
    state = dict(seeded_model.state_dict())
    del state["Prediction.bias"]
    state["Extra.weight"] = torch.zeros(3)
    state["FeatureExtraction.ConvNet.conv0_1.weight"] = torch.zeros(5, 1, 3, 3)
    path = tmp_path / "broken.pth"
    torch.save(state, path)
    with pytest.raises(CheckpointMismatchError) as error:
        load_model(path, output_channels=32)
    message = str(error.value)
    assert "missing keys: Prediction.bias" in message
    assert "unexpected keys: Extra.weight" in message
    assert "FeatureExtraction.ConvNet.conv0_1.weight: checkpoint [5, 1, 3, 3], model [2, 1, 3, 3]" in message


def test_wrong_width_suggests_the_checkpoint_width(tmp_path, seeded_model):
    path = tmp_path / "w32.pth"
    save_checkpoint(seeded_model, path)
    with pytest.raises(CheckpointMismatchError, match="output_channels=32: pass that instead"):
        load_model(path, output_channels=64)


def test_a_file_that_is_not_a_state_dict(tmp_path):
    path = tmp_path / "list.pth"
    torch.save([1, 2, 3], path)
    with pytest.raises(CheckpointMismatchError, match="not a state_dict"):
        load_model(path, output_channels=32)


def test_without_checkpoint_the_model_is_initialised_in_eval_mode():
    model = load_model(output_channels=32)
    assert isinstance(model, STRModel) and not model.training


def test_a_blend_lies_between_its_two_weights_and_keeps_the_second_counters():
    torch.manual_seed(2)
    first, second = STRModel(output_channels=16).eval(), STRModel(output_channels=16).eval()
    for module in second.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.fill_(0.2)
            module.num_batches_tracked.fill_(7)
    a, b = ({k: v.clone() for k, v in m.state_dict().items()} for m in (first, second))
    assert blend_weights(first, second, 0.25) is first
    for name, value in first.state_dict().items():
        if value.is_floating_point():
            torch.testing.assert_close(value, 0.75 * a[name] + 0.25 * b[name])
        else:
            assert torch.equal(value, b[name]), name
        assert torch.equal(second.state_dict()[name], b[name]), f"{name} of the second weights changed"
    with pytest.raises(ValueError, match=r"share must lie in \[0, 1\]"):
        blend_weights(first, second, 1.5)
    with pytest.raises(CheckpointMismatchError, match="output_channels=32"):
        blend_weights(first, STRModel(output_channels=32), 0.5)


@pytest.mark.parametrize("output_channels", [48, 64])
def test_a_widened_recogniser_reads_as_the_narrow_one_on_lines_of_several_widths(seeded_model, output_channels):
    wide = widen_weights(seeded_model, output_channels)
    assert wide.output_channels == output_channels and not wide.training
    torch.manual_seed(3)
    x, widths = torch.randn(3, 1, 32, 120), torch.tensor([120, 77, 40])
    with torch.no_grad():
        torch.testing.assert_close(wide(x, widths), seeded_model(x, widths), atol=1e-4, rtol=1e-4)


def assert_reads_close_but_not_alike(noisy, model, seed):
    torch.manual_seed(seed)
    x = torch.randn(2, 1, 32, 100)
    with torch.no_grad():
        logits, exact_logits = noisy(x), model(x)
    assert 0 < (logits - exact_logits).abs().max() < 0.1 * exact_logits.abs().max()


def test_noise_tells_the_copied_channels_apart_and_keeps_the_readings_close(seeded_model):
    exact, noisy = widen_weights(seeded_model, 64), widen_weights(seeded_model, 64, noise=0.01)
    conv, exact_conv = noisy.FeatureExtraction.ConvNet.conv0_2.weight, exact.FeatureExtraction.ConvNet.conv0_2.weight
    copies = [(a, b) for a in range(8) for b in range(a + 1, 8) if torch.equal(exact_conv[a], exact_conv[b])]
    assert len(copies) == 4, "without noise, each of the 4 channels has one copy"
    for a, b in copies:
        assert not torch.equal(conv[a], conv[b]), f"channel {b} is still channel {a}"
    change = (conv - exact_conv).abs().max() / exact_conv.std()
    assert 0 < change < 0.1, "the noise is not about 0.01 of the weights' spread"
    assert_reads_close_but_not_alike(noisy, seeded_model, seed=4)


def test_widening_asks_for_a_wider_multiple_of_16(seeded_model):
    for output_channels in (32, 16, 40):
        with pytest.raises(ValueError, match="multiple of 16 wider than 32"):
            widen_weights(seeded_model, output_channels)


@pytest.fixture(scope="module")
def model_with_context():
    torch.manual_seed(2)
    model = STRModel(output_channels=32, context_layers=2)
    # Trained context layers: their last projections are no longer the zeros that make an untrained one the identity.
    for name, parameter in model.SequenceModeling.named_parameters():
        is_norm_scale = "norm" in name and name.endswith("weight")
        torch.nn.init.normal_(parameter, mean=1.0 if is_norm_scale else 0.0, std=0.3)
    return model.eval()


def test_weights_with_a_frame_context_load_with_as_many_layers(tmp_path, model_with_context):
    save_checkpoint(model_with_context, tmp_path / "context.pth")
    loaded = load_model(tmp_path / "context.pth", 32)
    assert loaded.context_layers == 2
    x = torch.randn(2, 1, 32, 48)
    torch.testing.assert_close(forward(loaded, x), forward(model_with_context, x), rtol=0, atol=0)


@pytest.mark.parametrize("output_channels", [64, 96])
def test_weights_with_a_frame_context_widen_to_a_multiple_and_read_as_before(model_with_context, output_channels):
    wide = widen_weights(model_with_context, output_channels)
    assert (wide.output_channels, wide.context_layers) == (output_channels, 2)
    torch.manual_seed(5)
    x, widths = torch.randn(3, 1, 32, 120), torch.tensor([120, 77, 40])
    with torch.no_grad():
        narrow_frames = model_with_context.frames(x, widths)
        assert model_with_context(x, widths).sub(model_with_context.Prediction(narrow_frames)).abs().max() > 0.1, \
            "the context layers change nothing: the test would not see them widened wrong"
        torch.testing.assert_close(wide(x, widths), model_with_context(x, widths), atol=1e-4, rtol=1e-4)


def test_noise_tells_the_copied_context_channels_apart_and_keeps_the_readings_close(model_with_context):
    exact, noisy = widen_weights(model_with_context, 64), widen_weights(model_with_context, 64, noise=0.01)
    for name, exact_weight in exact.SequenceModeling.state_dict().items():
        if name.endswith("weight") and "norm" not in name:
            noisy_weight = noisy.SequenceModeling.state_dict()[name]
            # Side by side: rows 2i and 2i + 1 copy one row, in every block of in_proj (queries, keys, values).
            assert torch.equal(exact_weight[0::2], exact_weight[1::2]), f"{name}: rows not copied side by side"
            differs = (noisy_weight[0::2] != noisy_weight[1::2]).any(dim=1)
            assert differs.all(), f"{name}: rows {(~differs).nonzero().flatten().tolist()} of the copies still alike"
    assert_reads_close_but_not_alike(noisy, model_with_context, seed=6)


def test_weights_with_a_frame_context_are_not_widened_to_a_fraction_more(model_with_context):
    with pytest.raises(ValueError, match="widen to a multiple of their 32 channels"):
        widen_weights(model_with_context, 48)


def test_context_layers_numbered_with_a_gap_are_refused_by_name(tmp_path):
    state = STRModel(output_channels=32, context_layers=2).state_dict()
    state = {key.replace("SequenceModeling.layers.1.", "SequenceModeling.layers.2."): value
             for key, value in state.items()}
    torch.save(state, tmp_path / "gap.pth")
    with pytest.raises(CheckpointMismatchError, match=r"numbered \[0, 2\]"):
        load_model(tmp_path / "gap.pth", 32)


def test_a_checkpoint_says_its_width(tmp_path, seeded_model):
    save_checkpoint(seeded_model, tmp_path / "narrow.pth")
    save_checkpoint(widen_weights(seeded_model, 48), tmp_path / "wide.pth")
    assert (checkpoint_width(tmp_path / "narrow.pth"), checkpoint_width(tmp_path / "wide.pth")) == (32, 48)
    torch.save({"conv.weight": torch.zeros(1)}, tmp_path / "headless.pth")
    with pytest.raises(CheckpointMismatchError, match="has no Prediction.weight"):
        checkpoint_width(tmp_path / "headless.pth")


def blend_weights_script():
    path = Path(__file__).parents[3] / "scripts" / "blend_weights.py"
    spec = importlib.util.spec_from_file_location("blend_weights_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_blend_weights_reads_the_width_of_the_checkpoints_and_refuses_two_widths(tmp_path, seeded_model, capsys):
    script = blend_weights_script()
    first, second, output = tmp_path / "first.pth", tmp_path / "second.pth", tmp_path / "blend.pth"
    save_checkpoint(seeded_model, first)
    save_checkpoint(STRModel(output_channels=32), second)
    assert script([str(first), str(second), "--share", "0.25", "--output", str(output)]) == 0
    expected = blend_weights(load_model(first, 32), load_model(second, 32), 0.25).state_dict()
    blend = torch.load(output)
    assert blend.keys() == expected.keys() and all(torch.equal(value, expected[key]) for key, value in blend.items())

    save_checkpoint(STRModel(output_channels=48), second)
    with pytest.raises(SystemExit):
        script([str(first), str(second), "--share", "0.25", "--output", str(tmp_path / "none.pth")])
    assert "is 32 channels wide" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script([str(first), str(first), "--share", "1.5", "--output", str(tmp_path / "none.pth")])
    assert "--share is the second's part of the blend, in [0, 1]: got 1.5" in capsys.readouterr().err
    assert not (tmp_path / "none.pth").exists()
