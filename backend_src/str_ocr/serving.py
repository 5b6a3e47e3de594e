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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from .checkpoint import load_model
from .engines import ENGINES, PRECISIONS, Engine, build_engine, choose_engine, choose_precision
from .images import ImageLimits
from .contract import INPUT_HEIGHT, RECOGNIZER_PARAMETERS
from .recognizer import LineLimits, Recognizer
from .runtime import configure_threads, instance_device, threads_per_cpu_instance

T = TypeVar("T")
DEFAULTS = RECOGNIZER_PARAMETERS
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def model_parameters(config: Mapping[str, Any]) -> dict[str, str]:
    """The config's ``parameters`` as plain strings."""
    return {key: value["string_value"] for key, value in config.get("parameters", {}).items()}


def cpu_instance_count(config: Mapping[str, Any]) -> int:
    """How many CPU instances of this model the server runs (they share the cores)."""
    return sum(int(group.get("count", 1)) for group in config.get("instance_group", []) if group.get("kind") == "KIND_CPU")


def _parse(parameters: Mapping[str, str], name: str, convert: Callable[[str], T], default: T, expected: str) -> T:
    raw = parameters.get(name, "").strip()
    if not raw:
        return default
    try:
        return convert(raw)
    except ValueError:
        raise ValueError(f"model parameter {name!r} must be {expected}, got {raw!r}") from None


def _boolean(raw: str) -> bool:
    if raw.lower() in _TRUE | _FALSE:
        return raw.lower() in _TRUE
    raise ValueError(raw)


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def choose(raw: str) -> str:
        if raw.lower() not in choices:
            raise ValueError(raw)
        return raw.lower()
    return choose


def _one_of(choices: tuple[str, ...]) -> str:
    return "one of " + ", ".join(choices)


def _threads(raw: str) -> int | None:
    if raw.lower() == "auto":
        return None
    if int(raw) < 1:
        raise ValueError(raw)
    return int(raw)


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

    def engine_on(self, device: torch.device, threads: int) -> Engine:
        """The engine an instance with these settings runs on ``device``: the one ``engine`` and ``precision`` pick."""
        name = choose_engine(self.engine, device, self.precision)
        return build_engine(load_model(self.checkpoint, self.output_channels), name, device, threads,
                            choose_precision(self.precision, name), self.channels_last)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, str], version_dir: str | Path) -> ServingSettings:
        checkpoint = parameters.get("checkpoint", "").strip()
        return cls(
            checkpoint=Path(version_dir, checkpoint) if checkpoint else None,
            output_channels=_parse(parameters, "output_channels", int, cls.output_channels, "an integer such as 512"),
            limits=line_limits(parameters),
            max_padding=_parse(parameters, "max_padding", float, cls.max_padding, "a fraction such as 0.25"),
            cpu_threads=_parse(parameters, "cpu_threads", _threads, cls.cpu_threads, "'auto' or a positive integer"),
            channels_last=_parse(parameters, "channels_last", _boolean, cls.channels_last, "true or false"),
            engine=_parse(parameters, "engine", _choice(("auto", *ENGINES)), cls.engine, _one_of(("auto", *ENGINES))),
            precision=_parse(parameters, "precision", _choice(("auto", *PRECISIONS)), cls.precision,
                             _one_of(("auto", *PRECISIONS))),
        )


def line_limits(parameters: Mapping[str, str]) -> LineLimits:
    """The line widths a model accepts (the recogniser) or resizes into (``ocr_preprocess``)."""
    return LineLimits(
        min_width=_parse(parameters, "min_width", int, LineLimits.min_width, "a width in pixels"),
        max_width=_parse(parameters, "max_width", int, LineLimits.max_width, "a width in pixels"),
    )


def image_limits(parameters: Mapping[str, str]) -> ImageLimits:
    """The largest image file ``ocr_preprocess`` accepts, in bytes and in pixels."""
    return ImageLimits(
        max_bytes=_parse(parameters, "max_bytes", int, ImageLimits.max_bytes, "a number of bytes"),
        max_pixels=_parse(parameters, "max_pixels", int, ImageLimits.max_pixels, "a number of pixels"),
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
