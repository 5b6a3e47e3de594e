"""Reading the model repository's configs as Triton would, and the settings they give the served models."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from str_ocr.contract import MODEL_CALLS, POSTPROCESS, RECOGNIZER, SECOND_RECOGNIZER_PARAMETER

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
REPOSITORY = "model_repository"
"""The repository every server loads as it stands."""
ONNX_REPOSITORY = "model_repository_onnx"
"""The exported models, served beside ``REPOSITORY`` by a server with their backend once they are exported."""


def default_repository(name: str = REPOSITORY) -> Path:
    """The source tree's repository ``name`` when this package runs from it, else ``./name``."""
    source_tree = Path(__file__).resolve().parents[2] / name
    return source_tree if source_tree.is_dir() else Path(name).resolve()


def read_model_config(model_dir: Path, config_name: str | None = None) -> ModelConfig:
    """The config Triton would use for ``model_dir`` under ``--model-config-name=config_name``."""
    path = model_dir / "config.pbtxt"
    if config_name and (model_dir / "configs" / f"{config_name}.pbtxt").is_file():
        path = model_dir / "configs" / f"{config_name}.pbtxt"
    return text_format.Parse(path.read_text(), ModelConfig())


def read_configs(repository: Path, config_name: str | None = None) -> dict[str, ModelConfig]:
    """Every model of the repository, by name, with the config Triton would use."""
    return {d.name: read_model_config(d, config_name) for d in sorted(repository.iterdir())
            if (d / "config.pbtxt").is_file()}


def backend_of(config: ModelConfig) -> str:
    return config.backend or PLATFORM_BACKENDS.get(config.platform, config.platform)


def ensemble_steps(config: ModelConfig) -> list[str]:
    """The models a model cannot run without: an ensemble's steps, or those a Python model calls (BLS)."""
    return [step.model_name for step in config.ensemble_scheduling.step] + called_models(config)


def called_models(config: ModelConfig) -> list[str]:
    """The models a Python model calls (BLS): ``MODEL_CALLS``', and the one its ``second_recognizer`` names."""
    second = second_recognizer_of(config)
    return list(MODEL_CALLS.get(config.name, ())) + ([second] if second else [])


def second_recognizer_of(config: ModelConfig) -> str:
    """The recogniser with second weights a model's ``second_recognizer`` parameter names; empty for none."""
    parameter = config.parameters.get(SECOND_RECOGNIZER_PARAMETER)
    return parameter.string_value.strip() if parameter else ""


def recognizer_settings(repository: Path | None = None, config_name: str | None = None,
                        model: str = RECOGNIZER) -> ServingSettings:
    """What recogniser ``model`` is served with under ``config_name``: its checkpoint, width and limits."""
    from str_ocr.serving import ServingSettings  # noqa: PLC0415 - loads torch, which only this needs

    model_dir = (repository or default_repository()) / model
    config = read_model_config(model_dir, config_name)
    parameters = {key: value.string_value for key, value in config.parameters.items()}
    return ServingSettings.from_parameters(parameters, model_dir / "1")


def served_weights(repository: Path | None = None, config_name: str | None = None) -> tuple[Path | None, int]:
    """The checkpoint and width text_recognition is served with: ``str_ocr.load_model(*served_weights())``."""
    settings = recognizer_settings(repository, config_name)
    return settings.checkpoint, settings.output_channels


def second_recognizer(repository: Path | None = None) -> str:
    """The recogniser with second weights that ocr_postprocess reads unsure lines with as well (its
    ``second_recognizer``); empty where it names none."""
    return second_recognizer_of(read_model_config((repository or default_repository()) / POSTPROCESS))


def served_second_weights(repository: Path | None = None) -> Path | None:
    """The checkpoint ``second_recognizer`` serves, or None."""
    second = second_recognizer(repository)
    return recognizer_settings(repository, model=second).checkpoint if second else None


def served_recognizers(repository: Path | None = None) -> list[tuple[Path | None, int]]:
    """The checkpoint and width of each recogniser the repository serves (text_recognition, and each second one a
    model names): ``[str_ocr.load_model(*weights) for weights in served_recognizers()]``."""
    repository = repository or default_repository()
    seconds = sorted({second_recognizer_of(config) for config in read_configs(repository).values()} - {""})
    return [(settings.checkpoint, settings.output_channels)
            for settings in (recognizer_settings(repository, model=model) for model in [RECOGNIZER, *seconds])]
