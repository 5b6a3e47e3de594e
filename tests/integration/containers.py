"""The project's image as a server for the integration tests, through testcontainers.

``ContainerServer`` has ``ServerProcess``'s interface (start, stop, the three URLs, stub_pids/kill_stubs),
so that the same tests run against the local launcher and against the image that ships.
"""

from __future__ import annotations

import functools
from pathlib import Path

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_client.http import TritonHTTP
from str_ocr_client.readiness import wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_TAG = "str-ocr-triton:test"
PORTS = tuple(DEFAULT_PORTS)


def docker_unavailable() -> str | None:
    """Why no container can be run here, or None when a Docker engine answers."""
    try:
        import docker  # noqa: PLC0415

        docker.from_env().ping()
    except Exception as error:  # noqa: BLE001 - any failure means no engine to use
        return f"no Docker engine reachable here ({type(error).__name__}: {str(error)[:120]}): container tests run where Docker is"
    return None


@functools.lru_cache(maxsize=1)
def built_image() -> str:
    """Build the project's Dockerfile once per test session."""
    from testcontainers.core.image import DockerImage  # noqa: PLC0415

    DockerImage(path=str(REPO_ROOT), tag=IMAGE_TAG, clean_up=False).build()
    return IMAGE_TAG


class ContainerServer:
    def __init__(self, config_name: str | None = None, models: list[str] | None = None, log_path: Path | None = None,
                 admin_key: str | None = None, watchdog: float = 2, exit_timeout: int = 30, startup_timeout: float = 600):
        from testcontainers.core.container import DockerContainer  # noqa: PLC0415

        command = [f"--watchdog={watchdog}", f"--exit-timeout={exit_timeout}"]
        command += [f"--config-name={config_name}"] if config_name else []
        command += [f"--models={','.join(models)}"] if models else []
        self.container = (
            DockerContainer(built_image())
            .with_exposed_ports(*PORTS)
            .with_command(command)
            .with_kwargs(shm_size="256m", ulimits=[{"Name": "memlock", "Soft": -1, "Hard": -1},
                                                  {"Name": "stack", "Soft": 67108864, "Hard": 67108864}])
        )
        if admin_key:
            self.container = self.container.with_env("TRITON_ADMIN_KEY", admin_key)
        self.admin_key, self.log_path, self.startup_timeout = admin_key, log_path, startup_timeout
        self.exit_code: int | None = None

    def _address(self, port: int) -> str:
        return f"{self.container.get_container_host_ip()}:{self.container.get_exposed_port(port)}"

    @property
    def http_url(self) -> str:
        return self._address(DEFAULT_PORTS.http)

    @property
    def grpc_url(self) -> str:
        return self._address(DEFAULT_PORTS.grpc)

    @property
    def metrics_url(self) -> str:
        return self._address(DEFAULT_PORTS.metrics)

    def start(self) -> ContainerServer:
        self.container.start()
        try:
            wait_for(TritonHTTP(self.http_url).ready, self.startup_timeout, "the container", interval=0.5)
        except RuntimeError as error:
            raise RuntimeError(f"{error}:\n{self.log_tail()}") from None
        return self

    def log_tail(self, lines: int = 40) -> str:
        out, err = self.container.get_logs()
        text = (out + err).decode(errors="replace")
        if self.log_path:
            self.log_path.write_text(text)
        return "\n".join(text.splitlines()[-lines:])

    def stub_pids(self, model: str) -> list[int]:
        result = self.container.exec(["pgrep", "-f", f"triton_python_backend_stub .*/{model}/"])
        return [int(pid) for pid in result.output.decode().split()]

    def kill_stubs(self, model: str) -> int:
        pids = self.stub_pids(model)
        for pid in pids:
            self.container.exec(["kill", "-9", str(pid)])
        return len(pids)

    def stop(self, timeout: float = 60) -> int | None:
        """``docker stop``: SIGTERM to the launcher (the image's entrypoint); the container's exit status."""
        if self.exit_code is None:
            wrapped = self.container.get_wrapped_container()
            wrapped.stop(timeout=int(timeout))
            self.exit_code = wrapped.wait()["StatusCode"]
            self.log_tail()
            self.container.stop()
        return self.exit_code
