"""Finding a ``tritonserver`` binary, its release and its backends, and the command line the launcher runs it with."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from str_ocr.contract import Ports

BUILT_IN_BACKENDS = {"ensemble"}


@dataclass
class Triton:
    """A ``tritonserver`` binary, its backend directory and the environment it runs in."""

    binary: Path
    backend_dir: Path
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def backends(self) -> set[str]:
        return {p.name for p in self.backend_dir.iterdir() if p.is_dir()} | BUILT_IN_BACKENDS


def _pytriton_backend_dir(pytriton: Path, target: Path) -> Path:
    """A backend directory for the wheel's server: its Python backend plus the stub for this Python.

    The wheel keeps one stub per Python version apart from the backend; the backend looks for it
    beside ``libtriton_python.so``.
    """
    python_dir = target / "python"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = pytriton / "tritonserver" / "python_backend_stubs" / version / "triton_python_backend_stub"
    sources = [*(pytriton / "tritonserver" / "backends" / "python").glob("*.*"), stub]
    python_dir.mkdir(parents=True, exist_ok=True)
    for source in sources:
        copy = python_dir / source.name
        if not copy.exists() or copy.stat().st_mtime < source.stat().st_mtime:
            shutil.copy2(source, copy)
    return target


def find_triton() -> Triton:
    """The server to run: ``$TRITONSERVER_HOME``, then ``/opt/tritonserver``, then the nvidia-pytriton wheel."""
    for home in filter(None, [os.environ.get("TRITONSERVER_HOME"), "/opt/tritonserver"]):
        if Path(home, "bin", "tritonserver").is_file():
            return Triton(Path(home, "bin", "tritonserver"), Path(home, "backends"))
    try:
        import pytriton  # noqa: PLC0415 - only this fallback needs the wheel
    except ImportError:
        raise SystemExit("serve: no tritonserver found: run `make setup` (installs nvidia-pytriton), "
                         "or set TRITONSERVER_HOME") from None
    wheel = Path(pytriton.__file__).parent
    env = dict(os.environ)
    # The Python backend stub finds its packages through the virtualenv whose bin/ comes first on PATH.
    env["PATH"] = f"{Path(sys.prefix, 'bin')}{os.pathsep}{env.get('PATH', '')}"
    libs = wheel.parent / "nvidia_pytriton.libs"
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(libs), env.get("LD_LIBRARY_PATH")]))
    backend_dir = _pytriton_backend_dir(wheel, Path(sys.prefix, "triton_backends"))
    return Triton(wheel / "tritonserver" / "bin" / "tritonserver", backend_dir, env)


def server_version(binary: Path) -> tuple[int, int] | None:
    """The release of the server whose ``bin/tritonserver`` is ``binary``, from NVIDIA's ``TRITON_VERSION`` file
    beside ``bin/`` (None where there is none, as in the wheel's server, 2.51)."""
    try:
        text = (binary.parent.parent / "TRITON_VERSION").read_text()
    except OSError:
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None


def local_host(address: str) -> str:
    """Where this machine reaches a server bound to ``address``, as a URL's host (IPv6 in brackets)."""
    if address in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{address}]" if ":" in address else address


@dataclass(frozen=True)
class ServerOptions:
    """What the launcher asks of tritonserver, beyond the models to load."""

    repository: Path
    ports: Ports
    address: str = "127.0.0.1"
    """Where HTTP, gRPC and metrics listen."""
    http_address: str | None = None
    """Where HTTP listens instead, if elsewhere (loopback, behind the launcher's HTTP proxy)."""
    grpc_address: str | None = None
    """Where gRPC listens instead, if elsewhere (loopback, behind the launcher's gRPC proxy)."""
    config_name: str | None = None
    exit_timeout: int = 30
    disable_auto_complete_config: bool = False
    restriction: Sequence[str] = ()
    """Options restricting the administrative APIs (``str_ocr_server.admin.restriction_args``)."""
    extra: Sequence[str] = ()


def server_command(triton: Triton, options: ServerOptions, models: Sequence[str]) -> list[str]:
    command = [
        str(triton.binary),
        f"--model-repository={options.repository}",
        f"--backend-directory={triton.backend_dir}",
        "--model-control-mode=explicit",
        *(f"--load-model={m}" for m in models),
        f"--http-port={options.ports.http}",
        f"--grpc-port={options.ports.grpc}",
        f"--metrics-port={options.ports.metrics}",
        f"--http-address={options.http_address or options.address}",
        f"--grpc-address={options.grpc_address or options.address}",
        f"--metrics-address={options.address}",
        # Keep serving the models that did load; the launcher reports the ones that did not.
        "--exit-on-error=false",
        "--strict-readiness=true",
        f"--exit-timeout-secs={options.exit_timeout}",
    ]
    if options.disable_auto_complete_config:
        command.append("--disable-auto-complete-config")
    command += options.restriction
    if options.config_name:
        command.append(f"--model-config-name={options.config_name}")
    return command + list(options.extra)
