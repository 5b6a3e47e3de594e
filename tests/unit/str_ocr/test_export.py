"""ONNX export of checkpoints made here, checked and compared with PyTorch in ONNX Runtime.

A 512-channel checkpoint with random weights has logits in the hundreds: its export must pass, and the
tolerance, scaled to those logits, must still catch a graph with a layer perturbed or dropped.
"""

import contextlib
import io

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from torch import nn

from str_ocr import export as export_onnx
from str_ocr import STRModel, load_model, save_checkpoint
from str_ocr.export import compare, parity_batches


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    torch.manual_seed(11)
    path = tmp_path_factory.mktemp("ckpt") / "w.pth"
    save_checkpoint(STRModel(output_channels=32), path)
    return path


def export_quietly(args):
    """``export_onnx.main(args)``, with what it prints."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = export_onnx.main(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def fixed(checkpoint, tmp_path_factory):
    output = tmp_path_factory.mktemp("fixed") / "model.onnx"
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(output)]
    code, out, err = export_quietly(args)
    assert code == 0, err
    return output, out


def run_onnx(path, lines):
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(["308"], {"input.1": lines})[0]


def test_export_keeps_the_tutorial_names_and_matches_pytorch(checkpoint, fixed):
    output, out = fixed
    model = onnx.load(str(output))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["input.1"] and [o.name for o in model.graph.output] == ["308"]
    assert model.opset_import[0].version == export_onnx.OPSET
    reference = load_model(checkpoint, 32)
    for batch in (1, 5):
        lines = np.random.default_rng(batch).uniform(-1, 1, (batch, 1, 32, 100)).astype(np.float32)
        with torch.inference_mode():
            np.testing.assert_allclose(run_onnx(output, lines), reference(torch.from_numpy(lines)).numpy(), atol=1e-4)
    assert "passed: largest difference" in out and "relative" in out and "28 of 28 lines decode to the same text" in out


def test_dynamic_width_export(checkpoint, tmp_path):
    output = tmp_path / "dynamic.onnx"
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(output), "--dynamic-width"]
    assert export_onnx.main(args) == 0
    for batch, width in [(1, 64), (5, 213)]:
        lines = np.zeros((batch, 1, 32, width), np.float32)
        assert run_onnx(output, lines).shape == (batch, width // 4 + 1, 37)


def test_a_fixed_width_export_refuses_other_widths(fixed):
    with pytest.raises(Exception, match="invalid dimensions for input: input.1"):
        run_onnx(fixed[0], np.zeros((1, 1, 32, 64), np.float32))


def test_export_fails_loudly_above_the_tolerance(checkpoint, tmp_path, capsys):
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(tmp_path / "m.onnx"),
            "--rtol", "0", "--atol-scale", "0", "--check-batches", "2"]
    assert export_onnx.main(args) == 1
    assert "FAILED" in capsys.readouterr().err


def test_an_opset_the_model_cannot_be_expressed_in_fails(checkpoint, tmp_path, capsys):
    # Opset 9 has no Resize/Pad forms the graph needs: the exporter falls back to its own opset.
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(tmp_path / "m.onnx"),
            "--opset", "9"]
    assert export_onnx.main(args) == 1
    assert "asked for opset 9" in capsys.readouterr().err


def random_weights(model: nn.Module, seed: int = 7) -> nn.Module:
    """He-initialised convolutions and random batch-norm statistics: logits in the hundreds, as trained
    512-channel checkpoints have, where PyTorch's default initialisation gives logits near zero."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                fan_in = module.weight[0].numel()
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * (2 / fan_in) ** 0.5)
            elif isinstance(module, nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.normal_(0, 0.1, generator=generator)
                module.running_mean.normal_(0, 0.1, generator=generator)
                module.running_var.uniform_(0.5, 1.5, generator=generator)
    return model.eval()


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 512-channel checkpoint with large logits, exported by the command line once for every test here."""
    folder = tmp_path_factory.mktemp("large")
    save_checkpoint(random_weights(STRModel(output_channels=512)), folder / "w512.pth")
    args = ["--checkpoint", str(folder / "w512.pth"), "--output-channels", "512", "--output", str(folder / "m.onnx"),
            "--check-batches", "1", "2"]
    code, out, err = export_quietly(args)
    model = load_model(folder / "w512.pth", 512)
    return {"code": code, "out": out, "err": err, "onnx": folder / "m.onnx", "model": model}


def test_a_512_channel_checkpoint_with_large_logits_exports(large):
    with torch.inference_mode():
        logits = large["model"](torch.from_numpy(parity_batches([2], [100])[0]))
    assert logits.abs().max() > 100
    assert large["code"] == 0, large["err"]
    assert "passed: largest difference" in large["out"]


def broken_copy(path, folder, change):
    model = onnx.load(str(path))
    change(model.graph)
    broken = folder / "broken.onnx"
    onnx.save(model, str(broken))
    return broken


def perturb_last_convolution(graph):
    """Scale the last convolution's weights by 1.01: an export that lost precision in one layer."""
    conv = [n for n in graph.node if n.op_type == "Conv"][-1]
    weights = next(i for i in graph.initializer if i.name == conv.input[1])
    array = onnx.numpy_helper.to_array(weights) * np.float32(1.01)
    weights.CopyFrom(onnx.numpy_helper.from_array(array, weights.name))


def drop_a_relu(graph):
    """Remove one ReLU, wiring its input to its consumers: an export that lost a layer."""
    relu = [n for n in graph.node if n.op_type == "Relu"][len([n for n in graph.node if n.op_type == "Relu"]) // 2]
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == relu.output[0]:
                node.input[i] = relu.input[0]
    graph.node.remove(relu)


@pytest.mark.parametrize("change", [perturb_last_convolution, drop_a_relu])
def test_a_broken_graph_of_the_large_checkpoint_fails(large, tmp_path, change):
    broken = broken_copy(large["onnx"], tmp_path, change)
    parity = compare(large["model"], broken, parity_batches([2], [100]))
    assert not parity.passed, str(parity)
    assert parity.outside > 0
