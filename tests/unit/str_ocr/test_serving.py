import re

import pytest
import torch

from str_ocr import LineLimits
from str_ocr.runtime import instance_device, threads_per_cpu_instance
from str_ocr.serving import ServingSettings, build_recognizer
from str_ocr.settings import cpu_instance_count, model_parameters


def config(count=2, kind="KIND_CPU", **parameters):
    return {
        "name": "text_recognition",
        "instance_group": [{"count": count, "kind": kind}],
        "parameters": {k: {"string_value": v} for k, v in parameters.items()},
    }


@pytest.mark.parametrize("instances, cores, threads", [(1, 2, 2), (2, 2, 1), (3, 2, 1), (2, 16, 8), (0, 4, 4)])
def test_cpu_instances_share_the_cores(instances, cores, threads):
    assert threads_per_cpu_instance(instances, cores) == threads


def test_cpu_instance_count_ignores_gpu_instances():
    cfg = config(2)
    cfg["instance_group"].append({"count": 3, "kind": "KIND_GPU"})
    assert cpu_instance_count(cfg) == 2


def test_instance_device():
    assert instance_device("CPU") == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="KIND_CPU"):
            instance_device("GPU", 0)
    else:
        assert instance_device("GPU", 0) == torch.device("cuda", 0)


def test_settings_from_parameters(tmp_path):
    settings = ServingSettings.from_parameters(
        model_parameters(config(checkpoint="w.pth", output_channels="64", max_width="800", cpu_threads="3",
                                channels_last="true")), tmp_path)
    assert settings.checkpoint == tmp_path / "w.pth"
    assert settings.output_channels == 64
    assert settings.limits == LineLimits(max_width=800)
    assert settings.cpu_threads == 3 and settings.channels_last
    defaults = ServingSettings.from_parameters({}, tmp_path)
    assert defaults.checkpoint is None and defaults.cpu_threads is None and defaults.output_channels == 512


@pytest.mark.parametrize(
    "name, value, expected",
    [("output_channels", "wide", "an integer such as 512"), ("cpu_threads", "0", "'auto' or a positive integer"),
     ("channels_last", "maybe", "true or false"), ("max_padding", "x", "a fraction such as 0.25")],
)
def test_bad_parameters_name_the_parameter(tmp_path, name, value, expected):
    with pytest.raises(ValueError, match=re.escape(f"model parameter '{name}' must be {expected}, got '{value}'")):
        ServingSettings.from_parameters({name: value}, tmp_path)


def test_build_recognizer_loads_the_configured_checkpoint(tmp_path):
    from str_ocr import STRModel, save_checkpoint

    torch.manual_seed(3)
    save_checkpoint(STRModel(output_channels=32), tmp_path / "w.pth")
    recognizer = build_recognizer(config(1, checkpoint="w.pth", output_channels="32", cpu_threads="1", engine="torch"),
                                  tmp_path)
    assert recognizer.engine.model.output_channels == 32 and torch.get_num_threads() == 1
    expected = STRModel(output_channels=32)
    expected.load_state_dict(torch.load(tmp_path / "w.pth", weights_only=True))
    x = torch.rand(1, 1, 32, 100) * 2 - 1  # a normalised line
    with torch.inference_mode():
        torch.testing.assert_close(recognizer([x])[0], expected.eval()(x))
