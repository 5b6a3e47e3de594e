"""The launcher in a child process, on free ports: for the tests, the demo and the benchmarks.

    with ServerProcess(config_name="dynamic_batching") as server:
        client = InferenceServerClient(server.grpc_url)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from str_ocr_client.http import TritonHTTP
from str_ocr_client.readiness import wait_for
from str_ocr_triton.config import default_repository

from .admin import ADMIN_KEY_ENV
from .compat.stubs import children, is_alive, stubs_of


def free_ports(count: int) -> list[int]:
    """Ports nobody listens on now (held open together, so they differ)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class ServerProcess:
    """``python -m str_ocr_server`` in a child process, with its log in ``log_path``."""

    def __init__(
        self,
        config_name: str | None = None,
        models: Sequence[str] | None = None,
        repository: Path | None = None,
        log_path: Path | None = None,
        triton_args: Sequence[str] = (),
        launcher_args: Sequence[str] = (),
        startup_timeout: float = 300,
        admin_key: str | None = None,
        watchdog: float = 0.2,
        exit_timeout: int = 30,
    ) -> None:
        self.http_port, self.grpc_port, self.metrics_port, self.launcher_metrics_port = free_ports(4)
        self.repository = (repository or default_repository()).resolve()
        self.command = [sys.executable, "-m", "str_ocr_server", f"--model-repository={self.repository}"]
        self.command += [f"--http-port={self.http_port}", f"--grpc-port={self.grpc_port}",
                         f"--metrics-port={self.metrics_port}"]
        self.command += [f"--launcher-metrics-port={self.launcher_metrics_port}"]
        self.command += [f"--config-name={config_name}"] if config_name else []
        self.command += [f"--models={','.join(models)}"] if models else []
        self.command += ["--restrict-admin"] if admin_key else []
        self.command += [f"--watchdog={watchdog}", f"--exit-timeout={exit_timeout}", *launcher_args]
        self.command += ["--", *triton_args] if triton_args else []
        self.env = dict(os.environ) | ({ADMIN_KEY_ENV: admin_key} if admin_key else {})
        self.admin_key = admin_key
        self.log_path = log_path
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None

    @property
    def grpc_url(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    @property
    def metrics_url(self) -> str:
        return f"127.0.0.1:{self.metrics_port}"

    @property
    def launcher_metrics_url(self) -> str:
        return f"127.0.0.1:{self.launcher_metrics_port}"

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _exited(self) -> str | None:
        if self.process is None or self.process.poll() is None:
            return None
        return f"exited with status {self.process.returncode}"

    def start(self) -> ServerProcess:
        output = open(self.log_path, "w") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - closed by the child
        self.process = subprocess.Popen(self.command, stdout=output, stderr=subprocess.STDOUT, env=self.env)
        try:
            wait_for(TritonHTTP(self.http_url).ready, self.startup_timeout, "the server", gone=self._exited)
        except RuntimeError as error:
            self.stop()
            raise RuntimeError(f"{error}\n{self.log_tail()}") from None
        return self

    def triton_pids(self) -> list[int]:
        """The ``tritonserver`` process this launcher runs (none before it starts)."""
        return children(self.process.pid) if self.process else []

    def stub_pids(self, model: str) -> list[int]:
        """The Python backend stub processes of ``model``'s instances in this server."""
        return [s.pid for server in self.triton_pids() for s in stubs_of(server, self.repository) if s.model == model]

    def living(self, pids: Sequence[int]) -> list[int]:
        """Those of ``pids`` (this server's processes, as ``stub_pids`` gave them) that still run."""
        return [pid for pid in pids if is_alive(pid)]

    def kill_pid(self, pid: int) -> None:
        """SIGKILL one process of this server (a stub), as a crash would."""
        os.kill(pid, signal.SIGKILL)

    def signal_server(self, signum: int) -> None:
        """Send ``signum`` to tritonserver itself (SIGKILL or SIGABRT: a crash), not to the launcher."""
        for pid in self.triton_pids():
            os.kill(pid, signum)

    def kill_stubs(self, model: str) -> int:
        """SIGKILL ``model``'s stub processes, as a crash would; how many there were."""
        pids = self.stub_pids(model)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return len(pids)

    def stop(self, timeout: float = 60) -> int | None:
        """SIGTERM, as an orchestrator would; the exit status (None if it had to be killed)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
