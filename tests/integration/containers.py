"""The project's image as a server for the integration tests, through testcontainers.

``ContainerServer`` has ``ServerProcess``'s interface (start, stop, the four URLs, stub_pids/kill_stubs),
so that the same tests run against the local launcher and against the image that ships.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_server.metrics import LAUNCHER_METRICS_PORT
from str_ocr_client.http import TritonHTTP
from str_ocr_client.readiness import wait_for

# Ryuk, testcontainers' reaper, is an image to pull, and a machine without a registry has none; each
# ContainerServer stops its own container instead.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_TAG = "str-ocr-triton:cpu"  # the CPU image `make image` builds (docker/build.sh cpu)
PORTS = (*DEFAULT_PORTS, LAUNCHER_METRICS_PORT)
LOOPBACK = "127.0.0.1"
# The README's `docker run` options. Unlimited locked memory (NVIDIA's advice for pinned GPU memory) is
# refused where the engine may not raise the host's limit; the CPU server pins none, so 8 MiB does.
SHM_SIZE = "256m"
ULIMITS = {"memlock": 8388608, "stack": 67108864}
RUN_OPTIONS = [f"--shm-size={SHM_SIZE}", *(f"--ulimit={name}={value}" for name, value in ULIMITS.items())]
# The image always restricts the administrative APIs; without a key of the test's, the container gets this one.
DEFAULT_ADMIN_KEY = "container-tests-key"


def docker_unavailable() -> str | None:
    """Why no container can be run here, or None when a Docker engine answers."""
    try:
        import docker  # noqa: PLC0415

        docker.from_env().ping()
    except Exception as error:  # noqa: BLE001 - any failure means no engine to use
        return (f"no Docker engine reachable here ({type(error).__name__}: {str(error)[:120]}): "
                "container tests run where Docker is")
    return None


@functools.lru_cache(maxsize=1)
def built_image() -> str:
    """The image `make image` / `make test` built, or built now where it is missing."""
    import docker  # noqa: PLC0415

    try:
        docker.from_env().images.get(IMAGE_TAG)
    except docker.errors.ImageNotFound:
        subprocess.run(["bash", str(REPO_ROOT / "docker" / "build.sh"), "cpu"], check=True, timeout=3600)
    return IMAGE_TAG


class ContainerServer:
    def __init__(self, config_name: str | None = None, models: list[str] | None = None, log_path: Path | None = None,
                 admin_key: str | None = None, watchdog: float = 0, exit_timeout: int = 30,
                 startup_timeout: float = 600):
        from testcontainers.core.container import DockerContainer  # noqa: PLC0415

        # The image's --watchdog 2 probes would add inferences to the statistics the tests count, so it is
        # off unless a test asks for it (as the local ServerProcess's is).
        command = [f"--watchdog={watchdog}", f"--exit-timeout={exit_timeout}"]
        command += [f"--config-name={config_name}"] if config_name else []
        command += [f"--models={','.join(models)}"] if models else []
        self.container = (
            DockerContainer(built_image())
            .with_command(command)
            .with_kwargs(shm_size=SHM_SIZE, ulimits=[{"Name": n, "Soft": v, "Hard": v} for n, v in ULIMITS.items()])
        )
        # Published on free ports of 127.0.0.1 only (docker's default is every interface of the machine).
        self.container.ports.update({port: (LOOPBACK,) for port in PORTS})
        self.admin_key = admin_key or DEFAULT_ADMIN_KEY
        self.container = self.container.with_env("TRITON_ADMIN_KEY", self.admin_key)
        self.log_path, self.startup_timeout = log_path, startup_timeout
        self.exit_code: int | None = None

    def _address(self, port: int) -> str:
        published = self.container.get_docker_client().port(self.container.get_container_id(), port)
        return f"{LOOPBACK}:{published}"

    @property
    def http_url(self) -> str:
        return self._address(DEFAULT_PORTS.http)

    @property
    def grpc_url(self) -> str:
        return self._address(DEFAULT_PORTS.grpc)

    @property
    def metrics_url(self) -> str:
        return self._address(DEFAULT_PORTS.metrics)

    @property
    def launcher_metrics_url(self) -> str:
        return self._address(LAUNCHER_METRICS_PORT)

    def start(self) -> ContainerServer:
        self.container.start()
        try:
            wait_for(TritonHTTP(self.http_url).ready, self.startup_timeout, "the container", self._exited,
                     interval=0.5)
        except RuntimeError as error:
            raise RuntimeError(f"{error}:\n{self.log_tail()}") from None
        return self

    def _exited(self) -> str | None:
        """Why the container will never be ready (it exited, a model failed to load, say), or None."""
        container = self.container.get_wrapped_container()
        container.reload()
        if container.status in ("exited", "dead"):
            return f"it exited with status {container.attrs['State']['ExitCode']} before it was ready"
        return None

    def log_tail(self, lines: int = 40) -> str:
        out, err = self.container.get_logs()
        text = (out + err).decode(errors="replace")
        if self.log_path:
            self.log_path.write_text(text)
        return "\n".join(text.splitlines()[-lines:])

    def stub_pids(self, model: str) -> list[int]:
        result = self.container.exec(["pgrep", "-f", f"triton_python_backend_stub .*/{model}/"])
        return [int(pid) for pid in result.output.decode().split()]

    def living(self, pids: Sequence[int]) -> list[int]:
        """Those of ``pids`` (processes in the container, as ``stub_pids`` gave them) that still run."""
        if not pids:
            return []
        result = self.container.exec(["ps", "-o", "pid=,stat=", "-p", ",".join(map(str, pids))])
        rows = (line.split() for line in result.output.decode().splitlines())
        return [int(row[0]) for row in rows if len(row) == 2 and not row[1].startswith("Z")]

    def signal_server(self, signum: int) -> None:
        """Send ``signum`` to tritonserver inside the container (SIGKILL or SIGABRT: a crash), not to the launcher."""
        result = self.container.exec(["pkill", f"-{signum}", "-x", "tritonserver"])
        assert result.exit_code == 0, result.output

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
