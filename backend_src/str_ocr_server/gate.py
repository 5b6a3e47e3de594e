"""Saying "not ready" on the server's own readiness endpoint, without touching a served model.

This server release has no call that marks it not ready. Under ``--strict-readiness`` it is not ready
while any model it knows failed to load, so the gate is a model that exists only in the load request
(``str_ocr_readiness``): closing loads it with a backend that does not exist, which fails at once;
opening loads it as a valid ensemble over a served model and unloads it, after which the server counts
it as unloaded. It never serves a request: it is either failed or unloaded.
"""

from __future__ import annotations

import base64
import threading

from str_ocr_client.http import TritonHTTP

GATE_MODEL = "str_ocr_readiness"
_VERSION_FILE = {"file:1/GATE": base64.b64encode(b"readiness gate of the str_ocr launcher\n").decode()}


def _tensors(config: dict, key: str) -> list[dict]:
    return [{"name": t["name"], "data_type": t["data_type"], "dims": t["dims"]} for t in config.get(key, [])]


def wrapper_config(step_config: dict) -> dict:
    """A valid one-step ensemble over the served model whose config is ``step_config``."""
    identity = lambda key: {t["name"]: t["name"] for t in step_config.get(key, [])}  # noqa: E731
    return {
        "name": GATE_MODEL, "platform": "ensemble", "max_batch_size": step_config.get("max_batch_size", 0),
        "input": _tensors(step_config, "input"), "output": _tensors(step_config, "output"),
        "ensemble_scheduling": {"step": [{"model_name": step_config["name"], "model_version": -1,
                                          "input_map": identity("input"), "output_map": identity("output")}]},
    }


class ReadinessGate:
    """Closed while any reason to be not ready holds; ``reasons`` say which."""

    def __init__(self, http: TritonHTTP, served_model: str) -> None:
        self.http, self.served_model = http, served_model
        self.reasons: set[str] = set()
        self.lock = threading.Lock()

    def _load(self, config: dict) -> tuple[int, object]:
        return self.http.load(GATE_MODEL, config, _VERSION_FILE, timeout=30)

    def close(self, reason: str) -> None:
        with self.lock:
            if not self.reasons:
                # Fails by design: a model that failed to load keeps a strictly-ready server not ready.
                self._load({"name": GATE_MODEL, "backend": "str_ocr_not_ready"})
            self.reasons.add(reason)

    def open(self, reason: str) -> bool:
        """Drop ``reason``; once none is left, be ready again. False when that failed."""
        with self.lock:
            self.reasons.discard(reason)
            if self.reasons:
                return True
            config = self.http.config(self.served_model)
            if config is None:
                return False
            status, _ = self._load(wrapper_config(config))
            return status == 200 and self.http.unload(GATE_MODEL)[0] == 200
