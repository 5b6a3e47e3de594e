"""Reading the model repository's configs, and choosing the models a given server can load."""

from __future__ import annotations

import compileall
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from str_ocr.contract import RECOGNIZER

if TYPE_CHECKING:
    from str_ocr.serving import ServingSettings

ModelConfig = model_config_pb2.ModelConfig
MODEL_FILES = {"python": "model.py", "onnxruntime": "model.onnx", "tensorrt": "model.plan", "pytorch": "model.pt"}
PLATFORM_BACKENDS = {
    "ensemble": "ensemble",
    "onnxruntime_onnx": "onnxruntime",
    "tensorrt_plan": "tensorrt",
    "pytorch_libtorch": "pytorch",
    "tensorflow_savedmodel": "tensorflow",
    "tensorflow_graphdef": "tensorflow",
}


def default_repository() -> Path:
    """The source tree's ``model_repository`` when this package runs from it, else ``./model_repository``."""
    source_tree = Path(__file__).resolve().parents[2] / "model_repository"
    return source_tree if source_tree.is_dir() else Path("model_repository").resolve()


def compile_python_models(repository: Path) -> None:
    """Write the bytecode of every ``model.py`` before the server records the models' modification times.

    The stub's Python ignores ``PYTHONDONTWRITEBYTECODE`` (an isolated interpreter) and writes a stale or
    missing ``__pycache__`` into the version folder while it loads: the server would take the model for
    changed at its next load that looks at it (an ensemble over it, say), load it anew, and its old stub
    would exit as if it had died. A read-only repository (the image's) gets nothing written, by either.
    """
    compileall.compile_dir(repository, quiet=2)


def read_model_config(model_dir: Path, config_name: str | None = None) -> ModelConfig:
    """The config Triton would use for ``model_dir`` under ``--model-config-name=config_name``."""
    path = model_dir / "config.pbtxt"
    if config_name and (model_dir / "configs" / f"{config_name}.pbtxt").is_file():
        path = model_dir / "configs" / f"{config_name}.pbtxt"
    return text_format.Parse(path.read_text(), ModelConfig())


def read_configs(repository: Path, config_name: str | None = None) -> dict[str, ModelConfig]:
    """Every model of the repository, by name, with the config Triton would use."""
    return {d.name: read_model_config(d, config_name) for d in sorted(repository.iterdir()) if (d / "config.pbtxt").is_file()}


def backend_of(config: ModelConfig) -> str:
    return config.backend or PLATFORM_BACKENDS.get(config.platform, config.platform)


def ensemble_steps(config: ModelConfig) -> list[str]:
    return [step.model_name for step in config.ensemble_scheduling.step]


def _cannot_load(model_dir: Path, config: ModelConfig, backends: set[str]) -> str | None:
    """Why this server cannot load the model, or None."""
    backend = backend_of(config)
    if backend not in backends:
        return f"this server has no {backend!r} backend (NVIDIA's tritonserver container has it: see README)"
    filename = config.default_model_filename or MODEL_FILES.get(backend)
    versions = [d for d in model_dir.iterdir() if d.is_dir() and d.name.isdigit()]
    if filename and not any((v / filename).exists() for v in versions):
        hint = " (make it with scripts/export_onnx.py)" if filename.endswith(".onnx") else ""
        return f"no version folder holds {filename}{hint}"
    return None


def _skip_broken_ensembles(configs: dict[str, ModelConfig], skipped: dict[str, str]) -> None:
    """An ensemble needs every step: skip those with a step that is skipped or missing."""
    changed = True
    while changed:
        changed = False
        for name, config in configs.items():
            missing = [step for step in ensemble_steps(config) if step in skipped or step not in configs]
            if name not in skipped and missing:
                skipped[name] = f"its step(s) {', '.join(missing)} cannot be loaded"
                changed = True


def _with_steps(configs: dict[str, ModelConfig], selected: list[str]) -> list[str]:
    """``selected`` and, after each ensemble, its steps, each once."""
    closure: list[str] = []
    while selected:
        name = selected.pop(0)
        if name not in closure:
            closure.append(name)
            selected.extend(ensemble_steps(configs[name]) if name in configs else [])
    return closure


def plan_models(
    repository: Path, config_name: str | None, backends: set[str], wanted: Sequence[str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The models to load and, for each one skipped, why. ``wanted`` pulls in ensemble steps."""
    configs = read_configs(repository, config_name)
    unknown = sorted(set(wanted or []) - configs.keys())
    if unknown:
        raise SystemExit(f"serve: no model named {', '.join(unknown)} in {repository} (it has {', '.join(configs)})")
    skipped = {name: reason for name, c in configs.items() if (reason := _cannot_load(repository / name, c, backends))}
    _skip_broken_ensembles(configs, skipped)
    closure = _with_steps(configs, list(wanted) if wanted else list(configs))
    return [n for n in closure if n not in skipped], {n: r for n, r in skipped.items() if not wanted or n in closure}


def recognizer_settings(repository: Path | None = None, config_name: str | None = None) -> ServingSettings:
    """What text_recognition is served with under ``config_name``: its checkpoint, width and limits."""
    from str_ocr.serving import ServingSettings  # noqa: PLC0415 - loads torch, which only this needs

    model_dir = (repository or default_repository()) / RECOGNIZER
    config = read_model_config(model_dir, config_name)
    parameters = {key: value.string_value for key, value in config.parameters.items()}
    return ServingSettings.from_parameters(parameters, model_dir / "1")


def served_weights(repository: Path | None = None, config_name: str | None = None) -> tuple[Path | None, int]:
    """The checkpoint and width text_recognition is served with: ``str_ocr.load_model(*served_weights())``."""
    settings = recognizer_settings(repository, config_name)
    return settings.checkpoint, settings.output_channels
