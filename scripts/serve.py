"""Run the real ``tritonserver`` on this model repository, in the foreground.

    .venv/bin/python scripts/serve.py [--model-repository DIR] [--config-name NAME] [--models a,b]
                                      [--http-port N] [--grpc-port N] [--metrics-port N] [-- TRITON ARGS]

It finds a server (``$TRITONSERVER_HOME``, the NGC container's ``/opt/tritonserver``, or the one the
``nvidia-pytriton`` wheel ships in this virtualenv), loads the models whose backend that server has
(skipping the others with a message), waits until they are ready, and stops the server cleanly on
SIGTERM or SIGINT. It exits non-zero when a requested model fails to load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.triton_admin import ADMIN_APIS, ADMIN_HEADER, TritonHTTP, Watchdog, admin_key, restriction_args  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPOSITORY = REPO_ROOT / "model_repository"
MODEL_FILES = {"python": "model.py", "onnxruntime": "model.onnx", "tensorrt": "model.plan", "pytorch": "model.pt"}
PLATFORM_BACKENDS = {
    "ensemble": "ensemble",
    "onnxruntime_onnx": "onnxruntime",
    "tensorrt_plan": "tensorrt",
    "pytorch_libtorch": "pytorch",
    "tensorflow_savedmodel": "tensorflow",
    "tensorflow_graphdef": "tensorflow",
}
BUILT_IN_BACKENDS = {"ensemble"}
ADMIN_KEY_ENV = "TRITON_ADMIN_KEY"


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


# --- Finding a server ------------------------------------------------------------------------


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
    stub = pytriton / "tritonserver" / "python_backend_stubs" / f"{sys.version_info.major}.{sys.version_info.minor}" / "triton_python_backend_stub"
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
        raise SystemExit("serve: no tritonserver found: run `make setup` (installs nvidia-pytriton), or set TRITONSERVER_HOME") from None
    wheel = Path(pytriton.__file__).parent
    env = dict(os.environ)
    # The Python backend stub finds its packages through the virtualenv whose bin/ comes first on PATH.
    env["PATH"] = f"{Path(sys.prefix, 'bin')}{os.pathsep}{env.get('PATH', '')}"
    libs = wheel.parent / "nvidia_pytriton.libs"
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(libs), env.get("LD_LIBRARY_PATH")]))
    backend_dir = _pytriton_backend_dir(wheel, Path(sys.prefix, "triton_backends"))
    return Triton(wheel / "tritonserver" / "bin" / "tritonserver", backend_dir, env)


# --- Choosing the models ---------------------------------------------------------------------


def read_model_config(model_dir: Path, config_name: str | None = None) -> model_config_pb2.ModelConfig:
    """The config Triton would use for ``model_dir`` under ``--model-config-name=config_name``."""
    path = model_dir / "config.pbtxt"
    if config_name and (model_dir / "configs" / f"{config_name}.pbtxt").is_file():
        path = model_dir / "configs" / f"{config_name}.pbtxt"
    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())


def backend_of(config: model_config_pb2.ModelConfig) -> str:
    return config.backend or PLATFORM_BACKENDS.get(config.platform, config.platform)


def ensemble_steps(config: model_config_pb2.ModelConfig) -> list[str]:
    return [step.model_name for step in config.ensemble_scheduling.step]


def _cannot_load(model_dir: Path, config: model_config_pb2.ModelConfig, backends: set[str]) -> str | None:
    """Why this server cannot load the model, or None."""
    backend = backend_of(config)
    if backend not in backends:
        return f"this server has no {backend!r} backend (NVIDIA's tritonserver container has it: see README)"
    filename = config.default_model_filename or MODEL_FILES.get(backend)
    versions = [d for d in model_dir.iterdir() if d.is_dir() and d.name.isdigit()]
    if filename and not any((v / filename).exists() for v in versions):
        hint = " (make it with scripts/export_onnx.py)" if filename.endswith(".onnx") else ""
        return f"no version folder holds {filename}{hint}"
    return None


def plan_models(
    repository: Path, config_name: str | None, backends: set[str], wanted: Sequence[str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The models to load and, for each one skipped, why. ``wanted`` pulls in ensemble steps."""
    configs = {
        d.name: read_model_config(d, config_name) for d in sorted(repository.iterdir()) if (d / "config.pbtxt").is_file()
    }
    unknown = sorted(set(wanted or []) - configs.keys())
    if unknown:
        raise SystemExit(f"serve: no model named {', '.join(unknown)} in {repository} (it has {', '.join(configs)})")
    skipped = {name: reason for name, c in configs.items() if (reason := _cannot_load(repository / name, c, backends))}
    changed = True
    while changed:  # an ensemble needs every step
        changed = False
        for name, config in configs.items():
            missing = [step for step in ensemble_steps(config) if step in skipped or step not in configs]
            if name not in skipped and missing:
                skipped[name] = f"its step(s) {', '.join(missing)} cannot be loaded"
                changed = True
    selected = list(wanted) if wanted else list(configs)
    closure: list[str] = []
    while selected:
        name = selected.pop(0)
        if name not in closure:
            closure.append(name)
            selected.extend(ensemble_steps(configs[name]) if name in configs else [])
    return [n for n in closure if n not in skipped], {n: r for n, r in skipped.items() if not wanted or n in closure}


# --- Running it ------------------------------------------------------------------------------


def wait_until_ready(process: subprocess.Popen, http: TritonHTTP, models: Sequence[str], timeout: float) -> dict[str, str]:
    """Block until every model is READY; return the failed models' reasons (empty when all loaded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return {"tritonserver": f"exited with status {process.returncode} before it was ready (see its log above)"}
        if not http.live():
            time.sleep(0.2)
            continue
        states = {entry["name"]: entry for entry in http.index() if entry.get("version")}
        failed = {m: states[m].get("reason") or states[m].get("state", "") for m in models if states.get(m, {}).get("state") == "UNAVAILABLE"}
        if failed:
            return failed
        if all(states.get(m, {}).get("state") == "READY" for m in models):
            return {}
        time.sleep(0.2)
    return {"tritonserver": f"not ready after {timeout:.0f} s"}


def _die_with_parent() -> None:
    """In the child: receive SIGTERM when this launcher dies, so no server outlives it (Linux)."""
    try:
        import ctypes  # noqa: PLC0415

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def server_command(triton: Triton, args: argparse.Namespace, models: Sequence[str], key: str | None) -> list[str]:
    command = [
        str(triton.binary),
        f"--model-repository={args.model_repository}",
        f"--backend-directory={triton.backend_dir}",
        "--model-control-mode=explicit",
        *(f"--load-model={m}" for m in models),
        f"--http-port={args.http_port}",
        f"--grpc-port={args.grpc_port}",
        f"--metrics-port={args.metrics_port}",
        # Keep serving the models that did load; this launcher reports the ones that did not.
        "--exit-on-error=false",
        "--strict-readiness=true",
        f"--exit-timeout-secs={args.exit_timeout}",
    ]
    if args.disable_auto_complete_config:
        command.append("--disable-auto-complete-config")
    if key:
        command += restriction_args(key)
    if args.config_name:
        command.append(f"--model-config-name={args.config_name}")
    return command + list(args.triton_args)


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


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(child) for child in found]


class ServerProcess:
    """This launcher in a child process, on free ports: for tests, the demo and benchmarks.

        with ServerProcess(config_name="dynamic_batching") as server:
            client = InferenceServerClient(server.grpc_url)
    """

    def __init__(
        self,
        config_name: str | None = None,
        models: Sequence[str] | None = None,
        repository: Path = DEFAULT_REPOSITORY,
        log_path: Path | None = None,
        triton_args: Sequence[str] = (),
        startup_timeout: float = 300,
        admin_key: str | None = None,
        watchdog: float = 0,
        exit_timeout: int = 30,
    ) -> None:
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.repository = repository
        self.command = [sys.executable, str(Path(__file__).resolve()), f"--model-repository={repository}"]
        self.command += [f"--http-port={self.http_port}", f"--grpc-port={self.grpc_port}", f"--metrics-port={self.metrics_port}"]
        self.command += [f"--config-name={config_name}"] if config_name else []
        self.command += [f"--models={','.join(models)}"] if models else []
        self.command += ["--restrict-admin"] if admin_key else []
        self.command += [f"--watchdog={watchdog}", f"--exit-timeout={exit_timeout}"]
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

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def start(self) -> ServerProcess:
        output = open(self.log_path, "w") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - closed by the child
        self.process = subprocess.Popen(self.command, stdout=output, stderr=subprocess.STDOUT, env=self.env)
        http = TritonHTTP(self.http_port)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with status {self.process.returncode}:\n{self.log_tail()}")
            if http.ready():
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the server was not ready after {self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def triton_pids(self) -> list[int]:
        """The ``tritonserver`` process this launcher runs (none before it starts)."""
        return _children(self.process.pid) if self.process else []

    def stub_pids(self, model: str) -> list[int]:
        """The Python backend stub processes of ``model``'s instances in this server."""
        stubs = [stub for server in self.triton_pids() for stub in _children(server)]
        marker = f"triton_python_backend_stub {self.repository / model}/"
        return [pid for pid in stubs if marker in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()]

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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-repository", type=Path, default=DEFAULT_REPOSITORY, help="model repository (default: %(default)s)")
    parser.add_argument("--config-name", help="config variant: model/configs/NAME.pbtxt where a model has one, else its config.pbtxt")
    parser.add_argument("--models", type=lambda s: [m for m in s.split(",") if m], help="comma-separated models to load (default: all)")
    parser.add_argument("--http-port", type=int, default=8000)
    parser.add_argument("--grpc-port", type=int, default=8001)
    parser.add_argument("--metrics-port", type=int, default=8002)
    parser.add_argument("--startup-timeout", type=float, default=300, help="seconds to wait for the models (default: %(default)s)")
    parser.add_argument("--exit-timeout", type=int, default=30,
                        help="on SIGTERM, seconds in-flight requests get to finish (default: %(default)s)")
    parser.add_argument("--restrict-admin", action="store_true",
                        help=f"put the administrative APIs ({ADMIN_APIS}) behind the header '{ADMIN_HEADER}': the "
                             f"value of ${ADMIN_KEY_ENV}, or a key generated now and known only to this launcher")
    parser.add_argument("--watchdog", type=float, default=0, metavar="SECONDS",
                        help="probe every Python model this often and load again one whose stub process died (0: off)")
    parser.add_argument("--disable-auto-complete-config", action="store_true",
                        help="pass --disable-auto-complete-config: serve the configs exactly as written")
    parser.add_argument("triton_args", nargs="*", help="further tritonserver options, after --")
    args = parser.parse_args(argv)
    args.model_repository = args.model_repository.resolve()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    triton = find_triton()
    models, skipped = plan_models(args.model_repository, args.config_name, triton.backends, args.models)
    for name, reason in skipped.items():
        log(f"skipping {name}: {reason}")
    if args.models and set(args.models) & skipped.keys():
        log(f"cannot serve the requested model(s) {', '.join(sorted(set(args.models) & skipped.keys()))}")
        return 2
    if not models:
        log("no model to load")
        return 2

    key = admin_key(os.environ.get(ADMIN_KEY_ENV)) if args.restrict_admin else None
    http = TritonHTTP(args.http_port, key)
    process = subprocess.Popen(
        server_command(triton, args, models, key), env=triton.env, start_new_session=True, preexec_fn=_die_with_parent
    )
    watchdog: Watchdog | None = None
    stopping = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        log(f"{signal.Signals(signum).name}: stopping tritonserver (in-flight requests get {args.exit_timeout} s)")
        if watchdog:
            watchdog.stop()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failed = wait_until_ready(process, http, models, args.startup_timeout)
    if failed and not stopping:
        for name, reason in failed.items():
            log(f"{name} failed to load: {reason}")
        if process.poll() is None:
            process.terminate()
        process.wait()
        return 1
    if not stopping:
        config = f" with config {args.config_name!r}" if args.config_name else ""
        log(f"ready: {', '.join(models)}{config}; HTTP :{args.http_port}, gRPC :{args.grpc_port}, metrics :{args.metrics_port}")
        if args.watchdog > 0:
            configs = {m: read_model_config(args.model_repository / m, args.config_name) for m in models}
            instances = {m: sum(g.count or 1 for g in c.instance_group) or 1 for m, c in configs.items() if backend_of(c) == "python"}
            watchdog = Watchdog(http, instances, args.watchdog, log)
            watchdog.start()
    code = process.wait()
    log(f"tritonserver exited with status {code}")
    if code and watchdog and watchdog.recoveries:
        log("(the Python backend cannot unload a model version whose stub process died, so after a recovery "
            "tritonserver waits out --exit-timeout-secs and reports failure; requests in flight were answered first)")
    return code


if __name__ == "__main__":
    sys.exit(main())
