"""ONNX export of a checkpoint made here, checked and compared with PyTorch in ONNX Runtime."""

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

from scripts import export_onnx
from str_ocr import STRModel, load_model, save_checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    torch.manual_seed(11)
    path = tmp_path_factory.mktemp("ckpt") / "w.pth"
    save_checkpoint(STRModel(output_channels=32), path)
    return path


def run_onnx(path, lines):
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(["308"], {"input.1": lines})[0]


def test_export_keeps_the_tutorial_names_and_matches_pytorch(checkpoint, tmp_path, capsys):
    output = tmp_path / "model.onnx"
    assert export_onnx.main(["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(output)]) == 0
    model = onnx.load(str(output))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["input.1"] and [o.name for o in model.graph.output] == ["308"]
    assert model.opset_import[0].version == export_onnx.OPSET
    reference = load_model(checkpoint, 32)
    for batch in (1, 5):
        lines = np.random.default_rng(batch).uniform(-1, 1, (batch, 1, 32, 100)).astype(np.float32)
        with torch.inference_mode():
            np.testing.assert_allclose(run_onnx(output, lines), reference(torch.from_numpy(lines)).numpy(), atol=1e-4)
    assert "largest difference" in capsys.readouterr().out


def test_dynamic_width_export(checkpoint, tmp_path):
    output = tmp_path / "dynamic.onnx"
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(output), "--dynamic-width"]
    assert export_onnx.main(args) == 0
    for batch, width in [(1, 64), (5, 213)]:
        lines = np.zeros((batch, 1, 32, width), np.float32)
        assert run_onnx(output, lines).shape == (batch, width // 4 + 1, 37)


def test_a_fixed_width_export_refuses_other_widths(checkpoint, tmp_path):
    output = tmp_path / "fixed.onnx"
    assert export_onnx.main(["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(output)]) == 0
    with pytest.raises(Exception, match="invalid dimensions for input: input.1"):
        run_onnx(output, np.zeros((1, 1, 32, 64), np.float32))


def test_export_fails_loudly_above_the_tolerance(checkpoint, tmp_path, capsys):
    args = ["--checkpoint", str(checkpoint), "--output-channels", "32", "--output", str(tmp_path / "m.onnx"),
            "--tolerance", "0"]
    assert export_onnx.main(args) == 1
    assert "FAILED" in capsys.readouterr().err
