"""Saying "not ready" on the server's own readiness endpoint while ``stub_recovery`` replaces a model, without
touching a served model.

Server 2.51 has no call that marks it not ready (retired with ``stub_recovery``). Under ``--strict-readiness`` it
is not ready while any model it knows failed to load, so what says "not ready" is a model that exists only in the
load request (``str_ocr_readiness``): marking not ready loads it with a backend that does not exist, which fails at
once; marking ready loads it as a valid ensemble over a served model and unloads it, after which the server counts
it as unloaded. It never serves a request: it is either failed or unloaded.
"""

from __future__ import annotations

import base64
import threading

from str_ocr_client.http import TritonHTTP

READINESS_MODEL = "str_ocr_readiness"
_VERSION_FILE = {"file:1/READINESS": base64.b64encode(b"readiness model of the str_ocr launcher\n").decode()}


def _tensors(config: dict, key: str) -> list[dict]:
    return [{"name": t["name"], "data_type": t["data_type"], "dims": t["dims"]} for t in config.get(key, [])]


def wrapper_config(step_config: dict) -> dict:
    """A valid one-step ensemble over the served model whose config is ``step_config``."""
    identity = lambda key: {t["name"]: t["name"] for t in step_config.get(key, [])}  # noqa: E731
    return {
        "name": READINESS_MODEL, "platform": "ensemble", "max_batch_size": step_config.get("max_batch_size", 0),
        "input": _tensors(step_config, "input"), "output": _tensors(step_config, "output"),
        "ensemble_scheduling": {"step": [{"model_name": step_config["name"], "model_version": -1,
                                          "input_map": identity("input"), "output_map": identity("output")}]},
    }


class Readiness:
    """Not ready while any reason to be holds; ``reasons`` say which. ``serving`` is clear meanwhile."""

    def __init__(self, http: TritonHTTP, served_model: str, serving: threading.Event) -> None:
        self.http, self.served_model, self.serving = http, served_model, serving
        self.reasons: set[str] = set()
        self.closed = False
        self.lock = threading.Lock()

    def close(self) -> None:
        """The server it spoke for has exited: from now on it changes nothing (a new server has its own)."""
        with self.lock:
            self.closed = True

    def _load(self, config: dict) -> tuple[int, object]:
        return self.http.load(READINESS_MODEL, config, _VERSION_FILE, timeout=30)

    def mark_not_ready(self, reason: str) -> None:
        with self.lock:
            if self.closed:
                return
            self.serving.clear()
            if not self.reasons:
                # Fails by design: a model that failed to load keeps a strictly-ready server not ready.
                self._load({"name": READINESS_MODEL, "backend": "str_ocr_not_ready"})
            self.reasons.add(reason)

    def mark_ready(self, reason: str) -> bool:
        """Drop ``reason``; once none is left, be ready again. False when that failed."""
        with self.lock:
            self.reasons.discard(reason)
            if self.reasons or self.closed:
                return not self.closed
            config = self.http.config(self.served_model)
            if config is None:
                return False
            status, _ = self._load(wrapper_config(config))
            ready = status == 200 and self.http.unload(READINESS_MODEL)[0] == 200
            if ready:
                self.serving.set()
            return ready
