"""Building a recogniser from a Triton model configuration (as the JSON dict the backend hands over).

Settings come from the config's ``parameters`` so that one ``model.py`` serves every variant:

| parameter         | meaning                                                    |
| ----------------- | ---------------------------------------------------------- |
| ``checkpoint``    | weights file, relative to the version folder (none: random init) |
| ``output_channels`` | width of the recogniser (512 for the published model)    |
| ``min_width``, ``max_width`` | the line widths accepted, in pixels             |
| ``max_padding``   | how much padding lines of different widths may share       |
| ``engine``        | ``auto`` (``str_ocr.engines.choose_engine``), ``torch``, ``onnxruntime``, ``openvino`` |
| ``precision``     | ``auto`` (bf16 on OpenVINO where the CPU has it natively), ``f32``, ``bf16`` (``openvino`` only) |
| ``cpu_threads``   | threads of a CPU instance, whatever the engine; ``auto`` shares the cores |
| ``channels_last`` | NHWC memory layout for torch (faster convolutions on CPUs) |

Their defaults are ``str_ocr.contract.RECOGNIZER_PARAMETERS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .checkpoint import load_model
from .contract import INPUT_HEIGHT, RECOGNIZER_PARAMETERS
from .engines import ENGINES, PRECISIONS, Engine, build_engine, choose_engine, choose_precision
from .preprocess import LineLimits
from .recognizer import Recognizer
from .runtime import configure_threads, instance_device, threads_per_cpu_instance
from .settings import (boolean, choice, cpu_instance_count, line_limits, model_parameters, one_of, setting,
                       threads_or_auto)

DEFAULTS = RECOGNIZER_PARAMETERS


@dataclass(frozen=True)
class ServingSettings:
    """What a served recogniser is configured with; see the module docstring."""

    checkpoint: Path | None = None
    output_channels: int = DEFAULTS["output_channels"]
    limits: LineLimits = LineLimits()
    max_padding: float = DEFAULTS["max_padding"]
    cpu_threads: int | None = None  # DEFAULTS["cpu_threads"], "auto": the cores shared between the CPU instances
    channels_last: bool = DEFAULTS["channels_last"]
    engine: str = DEFAULTS["engine"]
    precision: str = DEFAULTS["precision"]

    def engine_and_precision(self, device: torch.device) -> tuple[str, str]:
        """The engine an instance with these settings runs on ``device`` and the precision it computes in."""
        name = choose_engine(self.engine, device, self.precision)
        return name, choose_precision(self.precision, name)

    def engine_on(self, device: torch.device, threads: int) -> Engine:
        """The engine an instance with these settings runs on ``device``: the one ``engine`` and ``precision`` pick."""
        name, precision = self.engine_and_precision(device)
        return build_engine(load_model(self.checkpoint, self.output_channels), name, device, threads, precision,
                            self.channels_last)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, str], version_dir: str | Path) -> ServingSettings:
        checkpoint = parameters.get("checkpoint", "").strip()
        return cls(
            checkpoint=Path(version_dir, checkpoint) if checkpoint else None,
            output_channels=setting(parameters, "output_channels", int, cls.output_channels, "an integer such as 512"),
            limits=line_limits(parameters),
            max_padding=setting(parameters, "max_padding", float, cls.max_padding, "a fraction such as 0.25"),
            cpu_threads=setting(parameters, "cpu_threads", threads_or_auto, cls.cpu_threads,
                                "'auto' or a positive integer"),
            channels_last=setting(parameters, "channels_last", boolean, cls.channels_last, "true or false"),
            engine=setting(parameters, "engine", choice(("auto", *ENGINES)), cls.engine, one_of(("auto", *ENGINES))),
            precision=setting(parameters, "precision", choice(("auto", *PRECISIONS)), cls.precision,
                             one_of(("auto", *PRECISIONS))),
        )


def build_recognizer(
    config: Mapping[str, Any],
    version_dir: str | Path,
    instance_kind: str = "CPU",
    device_id: int = 0,
) -> Recognizer:
    """The recogniser one Triton instance serves, warmed up and ready."""
    settings = ServingSettings.from_parameters(model_parameters(config), version_dir)
    device = instance_device(instance_kind, device_id)
    threads = settings.cpu_threads or threads_per_cpu_instance(cpu_instance_count(config))
    if device.type == "cpu":
        configure_threads(threads)
    recognizer = Recognizer(settings.engine_on(device, threads), limits=settings.limits,
                            max_padding=settings.max_padding)
    warm_up(recognizer)
    return recognizer


def warm_up(recognizer: Recognizer, width: int = 100) -> None:
    """One forward pass, so that the first request does not pay for allocations and kernel choice."""
    limits = recognizer.limits
    recognizer([torch.zeros(1, 1, INPUT_HEIGHT, min(max(width, limits.min_width), limits.max_width))])
