"""The layers import downwards only: the model package nothing of the project above it, the model
repository's adapters only the model package and the serving helpers (read statically, nothing is run)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = {p.name for p in (ROOT / "backend_src").iterdir() if (p / "__init__.py").is_file()} | {"client"}
MODEL_FILES = sorted((ROOT / "model_repository").glob("*/1/model.py"))


def project_imports(path: Path) -> set[str]:
    """The project's top-level packages that ``path`` imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & PROJECT_PACKAGES


def test_the_packages_are_found():
    assert {"str_ocr", "str_ocr_triton", "str_ocr_server", "str_ocr_client"} <= PROJECT_PACKAGES
    assert len(MODEL_FILES) >= 3


@pytest.mark.parametrize("path", sorted((ROOT / "backend_src" / "str_ocr").rglob("*.py")), ids=lambda p: p.name)
def test_the_model_package_imports_nothing_above_it(path):
    assert project_imports(path) <= {"str_ocr"}


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.parts[-3])
def test_a_model_adapter_imports_the_model_package_and_the_serving_helpers_only(path):
    assert project_imports(path) <= {"str_ocr", "str_ocr_triton"}
