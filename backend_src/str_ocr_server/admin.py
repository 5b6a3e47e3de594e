"""The admin key that guards the administrative APIs (loading and unloading models, statistics, ...)."""

from __future__ import annotations

import secrets

from str_ocr.contract import ADMIN_APIS, ADMIN_HEADER

ADMIN_KEY_ENV = "TRITON_ADMIN_KEY"


def admin_key(given: str | None) -> str:
    """The operator's key, or a fresh one that only this launcher knows."""
    return given or secrets.token_urlsafe(32)


def restriction_args(key: str) -> list[str]:
    """tritonserver options that put the administrative APIs of both protocols behind ``admin-key: key``."""
    rule = f"{','.join(ADMIN_APIS)}:{ADMIN_HEADER}={key}"
    return [f"--grpc-restricted-protocol={rule}", f"--http-restricted-api={rule}"]
