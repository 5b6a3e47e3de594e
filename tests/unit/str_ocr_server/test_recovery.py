"""A recovery that cannot succeed stops the server, so that the launcher exits and is restarted."""

from __future__ import annotations

import subprocess
from pathlib import Path

from str_ocr_server import watchdog
from str_ocr_server.metrics import LauncherMetrics


class Unreachable:
    """A server whose HTTP API answers nothing (status 0), as one that hangs would."""

    def probe(self, model: str) -> str:
        return "unknown"

    def config(self, model: str) -> None:
        return None


def test_a_model_that_cannot_be_recovered_stops_the_server(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(watchdog, "BACKOFF", 0.01)
    server = subprocess.Popen(["sleep", "60"])  # stands for tritonserver: what matters is that it gets SIGTERM
    logged: list[str] = []
    try:
        dog = watchdog.Watchdog(Unreachable(), server.pid, tmp_path, {"text_recognition": 2}, gate=None,
                                interval=0.1, log=logged.append, metrics=LauncherMetrics(["text_recognition"]))
        dog.recover("text_recognition")
        assert server.wait(5) == -15  # SIGTERM
    finally:
        server.kill()
    assert sum("loading text_recognition again failed" in line for line in logged) == watchdog.ATTEMPTS
    assert "could not be recovered in 3 attempts: stopping tritonserver" in logged[-1]
