"""The admin key that guards the administrative APIs (loading and unloading models, statistics, ...)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path

from str_ocr_client.http import ADMIN_HEADER

ADMIN_APIS = ("model-repository", "model-config", "shared-memory", "statistics", "trace", "logging")
"""The administrative APIs the launcher puts behind the admin key; inference, health and metadata stay open."""
ADMIN_KEY_ENV = "TRITON_ADMIN_KEY"
ADMIN_KEY_FILE_ENV = "TRITON_ADMIN_KEY_FILE"
"""A file holding the key: the Docker and Kubernetes way to hand over a secret without an environment value."""


def admin_key(environment: Mapping[str, str]) -> str:
    """The operator's key, from ``$TRITON_ADMIN_KEY_FILE`` or ``$TRITON_ADMIN_KEY``, else a fresh one only this
    launcher knows. A key file that cannot be read, or is empty, stops the launcher: serving with a key
    nobody holds would lock the operator out without a word."""
    if path := environment.get(ADMIN_KEY_FILE_ENV):
        try:
            key = Path(path).read_text().strip()
        except OSError as error:
            raise SystemExit(f"serve: cannot read the admin key file ${ADMIN_KEY_FILE_ENV}={path}: "
                             f"{error.strerror}") from None
        if not key:
            raise SystemExit(f"serve: the admin key file ${ADMIN_KEY_FILE_ENV}={path} is empty")
        return key
    return environment.get(ADMIN_KEY_ENV) or secrets.token_urlsafe(32)


def restriction_args(key: str) -> list[str]:
    """tritonserver options that put the administrative APIs of both protocols behind ``admin-key: key``."""
    rule = f"{','.join(ADMIN_APIS)}:{ADMIN_HEADER}={key}"
    return [f"--grpc-restricted-protocol={rule}", f"--http-restricted-api={rule}"]
