"""The configurations a sweep measures: the tutorial's variants, ours, and candidates for ours."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import torch

from google.protobuf import text_format

from str_ocr.contract import ENGINES, PRECISIONS, RECOGNIZER, TUTORIAL_VARIANTS
from str_ocr.engines import choose_engine, choose_precision
from str_ocr_triton.config import ModelConfig, default_repository, read_model_config

RECOMMENDED = "recommended"
CANDIDATES = {  # name: (max_batch_size, instances, max_queue_delay_microseconds, channels_last)
    "mbs8_2x_nhwc": (8, 2, 0, True),
    "mbs16_2x_nhwc": (16, 2, 0, True),
    "mbs32_2x_nhwc": (32, 2, 0, True),
    "mbs32_1x_nhwc": (32, 1, 0, True),
    "mbs32_2x_nchw": (32, 2, 0, False),
    "mbs64_2x_nhwc": (64, 2, 0, True),
    "mbs32_2x_nhwc_delay1ms": (32, 2, 1000, True),
}


def set_parameter(config: ModelConfig, key: str, value: str | None) -> None:
    if value is None:
        config.parameters.pop(key, None)
    else:
        config.parameters[key].string_value = value


def _copy(config: ModelConfig) -> ModelConfig:
    copy = ModelConfig()
    copy.CopyFrom(config)
    return copy


def candidates(base: ModelConfig) -> dict[str, ModelConfig]:
    """Variations of the recommended config along the knobs the model-alone timings point at."""
    result = {}
    for name, (max_batch, instances, delay_us, nhwc) in CANDIDATES.items():
        config = _copy(base)
        config.max_batch_size = max_batch
        config.instance_group[0].count = instances
        config.dynamic_batching.max_queue_delay_microseconds = delay_us
        set_parameter(config, "channels_last", "true" if nhwc else "false")
        result[name] = config
    return result


def selected_variants(which: str) -> dict[str, ModelConfig]:
    """``all``, ``tutorial`` (with ours), ``candidates`` (ours and its candidates), or ``name,name``."""
    model_dir = default_repository() / RECOGNIZER
    named = {name: read_model_config(model_dir, name) for name in TUTORIAL_VARIANTS}
    named[RECOMMENDED] = read_model_config(model_dir)
    everything = named | candidates(named[RECOMMENDED])
    if which == "all":
        return everything
    if which == "tutorial":
        return named
    if which == "candidates":
        return {n: c for n, c in everything.items() if n == RECOMMENDED or n in CANDIDATES}
    names = which.split(",")
    if unknown := [n for n in names if n not in everything and not (model_dir / "configs" / f"{n}.pbtxt").is_file()]:
        raise SystemExit(f"sweep: no configuration named {', '.join(unknown)}; known: {', '.join(everything)}")
    return {n: everything.get(n) or read_model_config(model_dir, n) for n in names}


def engine_spec(spec: str) -> tuple[str, str | None]:
    """``ENGINE`` or ``ENGINE:PRECISION`` -> (engine, precision or None), or a ValueError that says what to write."""
    engine, _, precision = spec.partition(":")
    if engine not in ENGINES or (precision and precision not in PRECISIONS):
        raise ValueError(f"engine {spec!r}: write ENGINE or ENGINE:PRECISION, ENGINE one of {', '.join(ENGINES)}, "
                         f"PRECISION one of {', '.join(PRECISIONS)}")
    return engine, precision or None


def with_engines(variants: dict[str, ModelConfig], engines: list[str]) -> dict[str, ModelConfig]:
    """Each variant on each engine (``str_ocr.engines``), named ``VARIANT@ENGINE``, in f32 unless the engine names its
    precision, ``openvino:bf16`` (named ``VARIANT@openvino-bf16``); ``["auto"]``: the variants as they are."""
    if engines == ["auto"]:
        return variants
    result = {}
    for name, config in variants.items():
        for spec in engines:
            engine, precision = engine_spec(spec)
            copy = _copy(config)
            set_parameter(copy, "engine", engine)
            set_parameter(copy, "precision", precision or "f32")
            result[f"{name}@{engine}-{precision}" if precision else f"{name}@{engine}"] = copy
    return result


def base_variant(name: str) -> str:
    """The config a swept configuration stands for: ``VARIANT@ENGINE`` -> ``VARIANT``."""
    return name.partition("@")[0]


def served_as(names: Iterable[str], variant: str = RECOMMENDED) -> str | None:
    """Among a sweep's names, ``variant`` on the engine and precision ``auto`` picks on this machine's CPU (what
    the image serves here), or None."""
    engine = choose_engine("auto", torch.device("cpu"))
    precision = choose_precision("auto", engine)
    found = set(names)
    return next((n for n in (variant, f"{variant}@{engine}-{precision}", f"{variant}@{engine}") if n in found), None)


def build_repository(root: Path, variants: dict[str, ModelConfig], checkpoint: str | None,
                     output_channels: int | None) -> Path:
    """A model repository holding text_recognition with every variant under configs/ (weights overridden)."""
    target = root / RECOGNIZER
    shutil.copytree(default_repository() / RECOGNIZER, target,
                    ignore=shutil.ignore_patterns("configs", "__pycache__", "*.onnx"))
    (target / "configs").mkdir()
    for name, config in variants.items():
        if checkpoint is not None:
            set_parameter(config, "checkpoint", None if checkpoint == "none" else str(Path(checkpoint).resolve()))
        if output_channels is not None:
            set_parameter(config, "output_channels", str(output_channels))
        (target / "configs" / f"{name}.pbtxt").write_text(text_format.MessageToString(config))
    return root
