"""Choosing the models a given server can load from the model repository, and preparing the repository for it."""

from __future__ import annotations

import compileall
from collections.abc import Sequence
from pathlib import Path

from str_ocr_triton.config import MODEL_FILES, ModelConfig, backend_of, ensemble_steps, read_configs


def compile_python_models(repository: Path) -> None:
    """Write the bytecode of every ``model.py`` before the server records the models' modification times.

    The stub's Python ignores ``PYTHONDONTWRITEBYTECODE`` (an isolated interpreter) and writes a stale or
    missing ``__pycache__`` into the version folder while it loads: the server would take the model for
    changed at its next load that looks at it (an ensemble over it, say), load it anew, and its old stub
    would exit as if it had died. A read-only repository (the image's) gets nothing written, by either.
    """
    compileall.compile_dir(repository, quiet=2)


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
    """``selected`` and, after each ensemble or calling model, the models it needs, each once."""
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
