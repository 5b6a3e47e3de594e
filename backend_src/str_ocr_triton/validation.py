"""Check every model configuration in the repository the way Triton would, before Triton does.

Every ``config.pbtxt`` and ``configs/*.pbtxt`` is parsed with Triton's own schema (``ModelConfig``).
Then: a config's name matches its folder; a model's variants agree on its tensors' names, types and
dims; every ensemble step names a model of the repository and maps tensors that exist, with matching
types; a Python model has its ``model.py`` and the checkpoint its parameters name; and the configs
keep the served contract (``str_ocr.contract``): the recogniser's tensors, its named variants, and
parameter names that the models read (a misspelt one would be ignored without a word), with values that
``ocr_postprocess`` and ``ocr_page`` accept; a second recogniser one of them names is checked as a recogniser.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from str_ocr import contract
from str_ocr.settings import page_settings, postprocess_settings
from str_ocr_triton.config import called_models, second_recognizer_of

Config = model_config_pb2.ModelConfig
KNOWN_PARAMETERS = {
    contract.RECOGNIZER: set(contract.RECOGNIZER_PARAMETERS),
    contract.PREPROCESS: set(contract.PREPROCESS_PARAMETERS),
    contract.POSTPROCESS: set(contract.POSTPROCESS_PARAMETERS),
    contract.DETECTOR: set(contract.DETECTOR_PARAMETERS),
    contract.OCR_PAGE: set(contract.PAGE_PARAMETERS),
}


CHOICES = {contract.RECOGNIZER: {"engine": ("auto", *contract.ENGINES), "precision": ("auto", *contract.PRECISIONS)},
           contract.OCR_PAGE: {"crop_batching": contract.CROP_BATCHINGS},
           contract.DETECTOR: {"engine": ("auto", *contract.DETECTOR_ENGINES)}}
"""Parameters whose value is one of a few words, by model."""
SETTINGS = {contract.POSTPROCESS: postprocess_settings, contract.OCR_PAGE: page_settings}
"""How the Python models that read their own settings read them (``str_ocr.settings``)."""


def type_name(data_type: int) -> str:
    return model_config_pb2.DataType.Name(data_type)


def tensors(config: Config) -> dict[str, tuple[str, str, list[int]]]:
    """name -> (input|output, type, dims) of a config's tensors."""
    result = {t.name: ("input", type_name(t.data_type), list(t.dims)) for t in config.input}
    result |= {t.name: ("output", type_name(t.data_type), list(t.dims)) for t in config.output}
    return result


def parse_variants(model_dir: Path, problems: list[str]) -> dict[str, Config]:
    """``config.pbtxt`` and each ``configs/*.pbtxt`` of a model, by their path inside the model folder."""
    paths = [model_dir / "config.pbtxt", *sorted((model_dir / "configs").glob("*.pbtxt"))]
    parsed = {}
    for path in paths:
        label = f"{model_dir.name}/{path.relative_to(model_dir)}"
        try:
            parsed[label] = text_format.Parse(path.read_text(), Config())
        except text_format.ParseError as error:
            problems.append(f"{label}: not a valid Triton model configuration: {error}")
    return parsed


def check_variants(model_dir: Path, variants: dict[str, Config], problems: list[str]) -> None:
    for label, config in variants.items():
        if config.name and config.name != model_dir.name:
            problems.append(f"{label}: name {config.name!r} differs from its folder {model_dir.name!r}")
        if not (config.backend or config.platform):
            problems.append(f"{label}: names neither a backend nor a platform")
    base_label = f"{model_dir.name}/config.pbtxt"
    if base_label not in variants:
        return
    expected = tensors(variants[base_label])
    for label, config in variants.items():
        found = tensors(config)
        for name in sorted(found.keys() - expected.keys()):
            problems.append(f"{label}: {found[name][0]} {name!r} is not in config.pbtxt (which has {sorted(expected)})")
        for name in sorted(expected.keys() - found.keys()):
            problems.append(f"{label}: {expected[name][0]} {name!r} of config.pbtxt is missing")
        for name in sorted(expected.keys() & found.keys()):
            if found[name] != expected[name]:
                problems.append(f"{label}: {name!r} is {found[name][1]} {found[name][2]}, "
                                f"config.pbtxt says {expected[name][1]} {expected[name][2]}")


def check_files(model_dir: Path, variants: dict[str, Config], problems: list[str]) -> None:
    for label, config in variants.items():
        if config.backend != "python":
            continue
        versions = sorted(d for d in model_dir.iterdir() if d.is_dir() and d.name.isdigit())
        for version in versions:
            if not (version / "model.py").is_file():
                problems.append(f"{label}: {version.name}/model.py is missing")
            checkpoint = config.parameters["checkpoint"].string_value if "checkpoint" in config.parameters else ""
            if checkpoint and not (version / checkpoint).is_file():
                problems.append(f"{label}: parameter checkpoint names {version.name}/{checkpoint}, "
                                "which does not exist")


def check_ensemble(label: str, ensemble: Config, models: dict[str, Config], problems: list[str]) -> None:
    """Every step's model exists, and its maps connect tensors that exist with the same type."""
    steps = [(n, s, models.get(s.model_name)) for n, s in enumerate(ensemble.ensemble_scheduling.step, 1)]
    for number, step, model in steps:
        if model is None:
            problems.append(f"{label}: step {number} names {step.model_name!r}, which is not in the repository")
    available = {t.name: type_name(t.data_type) for t in ensemble.input}
    for number, step, model in steps:  # what the steps produce, and of which type
        own = tensors(model) if model else {}
        for tensor, target in step.output_map.items():
            if model and own.get(tensor, ("",))[0] != "output":
                problems.append(f"{label}: step {number} maps {tensor!r}, which is not an output of {step.model_name} "
                                f"(it has {sorted(n for n, t in own.items() if t[0] == 'output')})")
            elif model:
                available[target] = own[tensor][1]
    for number, step, model in steps:  # what they consume
        own = tensors(model) if model else {}
        for tensor, source in step.input_map.items():
            if model and own.get(tensor, ("",))[0] != "input":
                problems.append(f"{label}: step {number} maps {tensor!r}, which is not an input of {step.model_name} "
                                f"(it has {sorted(n for n, t in own.items() if t[0] == 'input')})")
            elif source not in available:
                problems.append(f"{label}: step {number} reads {source!r}, which is neither an ensemble input "
                                "nor a step's output")
            elif model and available[source] != own[tensor][1]:
                problems.append(f"{label}: step {number} feeds {source!r} ({available[source]}) to {step.model_name}'s "
                                f"{tensor!r} ({own[tensor][1]})")
    for output in ensemble.output:
        if output.name not in available:
            problems.append(f"{label}: ensemble output {output.name!r} is produced by no step")
        elif available[output.name] != type_name(output.data_type):
            problems.append(f"{label}: ensemble output {output.name!r} is {type_name(output.data_type)}, "
                            f"its step gives {available[output.name]}")


def check_contract(model_dir: Path, variants: dict[str, Config], problems: list[str],
                   recognizer: bool = False) -> None:
    """The recogniser's tensors and variants as ``str_ocr.contract`` has them (``recognizer``: the model is one, as
    a second recogniser named by another model is); known parameter names only, with values the model accepts."""
    kind = contract.RECOGNIZER if recognizer else model_dir.name
    known = KNOWN_PARAMETERS.get(kind, set()) | set(contract.PYTHON_BACKEND_PARAMETERS)
    for label, config in variants.items():
        if config.backend == "python":
            for name in sorted(set(config.parameters) - known):
                problems.append(f"{label}: parameter {name!r} is read by nothing (known: {sorted(known)})")
            check_settings(kind, label, config, problems)
            for name, choices in CHOICES.get(kind, {}).items():
                value = config.parameters[name].string_value if name in config.parameters else ""
                if value and value.lower() not in choices:
                    problems.append(f"{label}: parameter {name!r} is {value!r}; it must be one of {', '.join(choices)}")
    if model_dir.name == contract.OCR_PAGE:
        check_page(variants, problems)
    if kind not in (contract.RECOGNIZER, contract.RECOGNIZER_ONNX):
        return
    for name in contract.VARIANTS if model_dir.name == contract.RECOGNIZER else ():
        if f"{model_dir.name}/configs/{name}.pbtxt" not in variants:
            problems.append(f"{model_dir.name}: variant configs/{name}.pbtxt is missing")
    for label, config in variants.items():
        found = tensors(config)
        shape = found.get(contract.INPUT_NAME, ("", "", []))[2]
        if shape[:2] != [1, contract.INPUT_HEIGHT] or len(shape) != 3:
            problems.append(f"{label}: input {contract.INPUT_NAME!r} must be [1, {contract.INPUT_HEIGHT}, W], "
                            f"not {shape}")
            continue
        width = shape[2]
        length = -1 if width == -1 else contract.output_length(width)
        expected = ("output", "TYPE_FP32", [length, contract.NUM_CLASSES])
        if found.get(contract.OUTPUT_NAME) != expected:
            problems.append(f"{label}: output {contract.OUTPUT_NAME!r} must be TYPE_FP32 {expected[2]} "
                            f"for width {width}")


def check_settings(kind: str, label: str, config: Config, problems: list[str]) -> None:
    """The parameters of ``ocr_postprocess`` and ``ocr_page`` read as the models read them, each error reported."""
    read = SETTINGS.get(kind)
    if read is None:
        return
    try:
        read({key: value.string_value for key, value in config.parameters.items()})
    except ValueError as error:
        problems.append(f"{label}: {error}")


def check_page(variants: dict[str, Config], problems: list[str]) -> None:
    """ocr_page's tensors as ``str_ocr.contract.PAGE_TENSORS`` has them, one image per request."""
    for label, config in variants.items():
        if config.max_batch_size != 0:
            problems.append(f"{label}: max_batch_size must be 0 (one image per request), not {config.max_batch_size}")
        if tensors(config) != contract.PAGE_TENSORS:
            problems.append(f"{label}: tensors must be {contract.PAGE_TENSORS}, not {tensors(config)}")


def check_calls(models: dict[str, Config], problems: list[str]) -> None:
    """The models that Python models call (BLS) are in the repository; a second recogniser has the recogniser's
    tensors."""
    recognizer = tensors(models[contract.RECOGNIZER]) if contract.RECOGNIZER in models else None
    for caller, config in models.items():
        for called in called_models(config):
            if called not in models:
                problems.append(f"{caller}: it calls {called!r}, which is not in the repository")
        second = second_recognizer_of(config)
        if second in (caller, contract.RECOGNIZER):
            problems.append(f"{caller}: its {contract.SECOND_RECOGNIZER_PARAMETER} {second!r} must be a recogniser "
                            f"with other weights than {contract.RECOGNIZER}'s, not {second!r}")
        elif second in models and recognizer and tensors(models[second]) != recognizer:
            problems.append(f"{caller}: its {contract.SECOND_RECOGNIZER_PARAMETER} {second!r} must have "
                            f"{contract.RECOGNIZER}'s tensors {recognizer}, not {tensors(models[second])}")


def validate(repository: Path) -> list[str]:
    """Every problem found in the repository's configurations; an empty list when there is none."""
    problems: list[str] = []
    models: dict[str, Config] = {}
    all_variants: dict[str, dict[str, Config]] = {}
    model_dirs = sorted(d for d in repository.iterdir() if (d / "config.pbtxt").is_file())
    for model_dir in model_dirs:
        variants = parse_variants(model_dir, problems)
        all_variants[model_dir.name] = variants
        if f"{model_dir.name}/config.pbtxt" in variants:
            models[model_dir.name] = variants[f"{model_dir.name}/config.pbtxt"]
    seconds = {contract.SECOND_RECOGNIZER} | {second_recognizer_of(config) for config in models.values()}
    for model_dir in model_dirs:
        variants = all_variants[model_dir.name]
        check_variants(model_dir, variants, problems)
        check_files(model_dir, variants, problems)
        check_contract(model_dir, variants, problems, recognizer=model_dir.name in seconds)
    check_calls(models, problems)
    for variants in all_variants.values():
        for label, config in variants.items():
            if config.platform == "ensemble":
                check_ensemble(label, config, models, problems)
    return problems
