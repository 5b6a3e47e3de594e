"""Run the real ``tritonserver`` on this model repository, in the foreground.

    python -m str_ocr_server [--model-repository DIR] [--config-name NAME] [--models a,b]
                             [--address A] [--http-port N] [--grpc-port N] [--metrics-port N]
                             [--launcher-metrics-port N] [--http-max-body-bytes N] [--no-http-guard]
                             [--grpc-max-message-bytes N] [--no-grpc-guard]
                             [--watchdog S] [--accept-known-vulnerability]
                             [--restrict-admin] [-- TRITONSERVER OPTIONS]

It finds a server (``$TRITONSERVER_HOME``, the NGC container's ``/opt/tritonserver``, or the one the
``nvidia-pytriton`` wheel ships in this virtualenv), loads the models whose backend that server has
(skipping the others with a message), waits until they are ready, and stops the server cleanly on
SIGTERM or SIGINT. It exits non-zero when a requested model fails to load.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from str_ocr.contract import ADMIN_APIS, ADMIN_HEADER, DEFAULT_PORTS, LAUNCHER_METRICS_PORT, Ports
from str_ocr_client.http import TritonHTTP

from .admin import ADMIN_KEY_ENV, ADMIN_KEY_FILE_ENV, admin_key, restriction_args
from .repository import compile_python_models, default_repository, plan_models
from .drain import wait_until_idle
from .exposure import ACCEPT_FLAG, OVERFLOW_FIXED_IN, addresses, local_host, refusal, server_version
from .gate import ReadinessGate
from .front import Front
from .grpc_guard import GrpcGuard
from .http_guard import HttpGuard
from .metrics import LauncherMetrics
from .process import free_ports
from .reaper import LIBRARY, StubReaper
from .stubs import living_stubs
from .triton import ServerOptions, Triton, find_triton, server_command
from .watchdog import Watchdog, served_instances

MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The largest HTTP body or gRPC message taken by default: an 8 MiB image (the ensemble's limit) in JSON, with room."""
WATCH_INTERVAL = 0.2
"""The longest time between two reads of the stub processes: a dead one is seen within it."""


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


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


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m str_ocr_server", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-repository", type=Path, default=default_repository(), help="model repository (default: %(default)s)")
    parser.add_argument("--config-name", help="config variant: model/configs/NAME.pbtxt where a model has one, else its config.pbtxt")
    parser.add_argument("--models", type=lambda s: [m for m in s.split(",") if m], help="comma-separated models to load (default: all)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="where HTTP, gRPC and both metrics endpoints listen (default: %(default)s; 0.0.0.0: every "
                             f"interface, which a server with a known vulnerability takes only with {ACCEPT_FLAG})")
    parser.add_argument(ACCEPT_FLAG, action="store_true",
                        help="listen beyond loopback even with a server that one malformed request can take a model "
                             "down with (str_ocr_server.exposure)")
    parser.add_argument("--http-port", type=int, default=DEFAULT_PORTS.http)
    parser.add_argument("--http-max-body-bytes", type=int, default=MAX_REQUEST_BYTES, metavar="N",
                        help="refuse (413) an HTTP request body larger than this, before it is read whole "
                             "(default: %(default)s)")
    parser.add_argument("--no-http-guard", action="store_true",
                        help="serve tritonserver's own HTTP endpoint on --http-port, without the launcher's front "
                             "(str_ocr_server.http_guard): no body bound, 500 for malformed JSON, overflowing "
                             "shapes passed to the models")
    parser.add_argument("--grpc-port", type=int, default=DEFAULT_PORTS.grpc)
    parser.add_argument("--grpc-max-message-bytes", type=int, default=MAX_REQUEST_BYTES, metavar="N",
                        help="refuse (RESOURCE_EXHAUSTED) a gRPC message larger than this (default: %(default)s)")
    parser.add_argument("--no-grpc-guard", action="store_true",
                        help="serve tritonserver's own gRPC endpoint on --grpc-port, without the launcher's front "
                             "(str_ocr_server.grpc_guard), which a server before 2.67 gets by default: faster, but "
                             f"overflowing shapes reach the models, so it listens beyond loopback only with {ACCEPT_FLAG}")
    parser.add_argument("--metrics-port", type=int, default=DEFAULT_PORTS.metrics)
    parser.add_argument("--launcher-metrics-port", type=int, default=LAUNCHER_METRICS_PORT,
                        help="port of the launcher's own Prometheus metrics, the watchdog's recoveries (0: none; "
                             "default: %(default)s)")
    parser.add_argument("--startup-timeout", type=float, default=300, help="seconds to wait for the models (default: %(default)s)")
    parser.add_argument("--exit-timeout", type=int, default=30,
                        help="on SIGTERM, seconds in-flight requests get to finish (default: %(default)s)")
    parser.add_argument("--restrict-admin", action="store_true",
                        help=f"put the administrative APIs ({','.join(ADMIN_APIS)}) behind the header '{ADMIN_HEADER}': the "
                             f"contents of the file ${ADMIN_KEY_FILE_ENV}, else the value of ${ADMIN_KEY_ENV}, else a key "
                             "generated now and known only to this launcher")
    parser.add_argument("--watchdog", type=float, default=WATCH_INTERVAL, metavar="SECONDS",
                        help=f"watch every stub process this often, at most {WATCH_INTERVAL} s apart, and replace the "
                             "instance whose stub died, not ready meanwhile (0: off; default: %(default)s)")
    parser.add_argument("--disable-auto-complete-config", action="store_true",
                        help="pass --disable-auto-complete-config: serve the configs exactly as written")
    parser.add_argument("triton_args", nargs="*", help="further tritonserver options, after --")
    args = parser.parse_args(argv)
    args.model_repository = args.model_repository.resolve()
    return args


def _start_watchdog(args: argparse.Namespace, http: TritonHTTP, server_pid: int, models: Sequence[str],
                    gate: ReadinessGate, metrics: LauncherMetrics, reaper: StubReaper | None) -> Watchdog:
    configs = {m: http.config(m) for m in models}
    for model in (m for m, c in configs.items() if c is None):
        log(f"watchdog: {model}'s configuration could not be read from the server; its stubs are not watched")
    instances = {m: served_instances(c) for m, c in configs.items() if c and c.get("backend") == "python"}
    watchdog = Watchdog(http, server_pid, args.model_repository, instances, gate, min(args.watchdog, WATCH_INTERVAL), log,
                        metrics, reaper.reap if reaper else None)
    watchdog.start()
    return watchdog


def _start_server(command: list[str], triton: Triton, watching: bool) -> tuple[subprocess.Popen, StubReaper | None]:
    """tritonserver, in a session of its own, dying with the launcher; with the stub reaper where it will be used."""
    reaper = StubReaper() if watching and LIBRARY.is_file() else None
    if watching and not reaper:
        log(f"stubs that die stay zombies until tritonserver exits: {LIBRARY.name} is not built (make setup builds it)")
    process = subprocess.Popen(command, env=reaper.environment(triton.env) if reaper else triton.env,
                               pass_fds=reaper.pass_fds if reaper else (), start_new_session=True,
                               preexec_fn=_die_with_parent)
    if reaper:
        reaper.started()
    return process, reaper


def _start_front(front: type[Front] | None, address: str, port: int, limit: int) -> tuple[Front | None, int]:
    """The launcher's front of this kind on ``address:port`` (none: None); and the port tritonserver takes for it."""
    if front is None:
        return None, port
    (upstream,) = free_ports(1)
    guard = front(f"127.0.0.1:{upstream}", limit)
    guard.start(address, port)
    return guard, upstream


def _start_fronts(args: argparse.Namespace) -> list[tuple[Front | None, int]] | None:
    """The HTTP and the gRPC front, each unless turned off, with the port tritonserver takes behind it; None (said
    why) if one cannot listen."""
    started = []
    for protocol, front, port, limit in (
            ("http", None if args.no_http_guard else HttpGuard, args.http_port, args.http_max_body_bytes),
            ("grpc", None if args.no_grpc_guard else GrpcGuard, args.grpc_port, args.grpc_max_message_bytes)):
        try:
            started.append(_start_front(front, args.address, port, limit))
        except OSError as error:
            log(f"cannot listen for {protocol} on {args.address}:{port} ({error}); choose another with --{protocol}-port")
            return None
    return started


def _terminate(process: subprocess.Popen, fronts: Sequence[Front | None]) -> None:
    """SIGTERM to tritonserver, the fronts closed first: the server would wait for their open HTTP connections."""
    for front in filter(None, fronts):
        front.close()
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)


def _drain(args: argparse.Namespace, gate: ReadinessGate | None, fronts: Sequence[Front | None]) -> bool:
    """Not ready, then wait (at most --exit-timeout) until nothing is in flight; whether it came to that."""
    if gate is None:
        return False
    gate.close("stopping")
    start = time.monotonic()
    idle = wait_until_idle(f"{local_host(args.address)}:{args.metrics_port}", args.exit_timeout,
                           busy=lambda: any(f.in_flight for f in filter(None, fronts)))
    log(f"drained in {time.monotonic() - start:.1f} s" if idle else "could not see the server idle; stopping it anyway")
    return idle


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    triton = find_triton()
    version = server_version(triton.binary)
    # Only a server before the fix needs the gRPC front. The fronts cover --address; an address given to tritonserver
    # itself, or one a front is off for, is not.
    args.no_grpc_guard |= version is not None and version >= OVERFLOW_FIXED_IN
    unfronted = args.address if args.no_http_guard or args.no_grpc_guard else None
    for address in addresses(unfronted, args.triton_args):
        if reason := refusal(address, version, args.accept_known_vulnerability):
            log(reason)
            return 2
    models, skipped = plan_models(args.model_repository, args.config_name, triton.backends, args.models)
    for name, reason in skipped.items():
        log(f"skipping {name}: {reason}")
    if args.models and set(args.models) & skipped.keys():
        log(f"cannot serve the requested model(s) {', '.join(sorted(set(args.models) & skipped.keys()))}")
        return 2
    if not models:
        log("no model to load")
        return 2

    metrics = LauncherMetrics(models)
    if args.launcher_metrics_port:
        try:
            metrics.serve(args.launcher_metrics_port, args.address)
        except OSError as error:
            log(f"serving without the launcher's metrics: port {args.launcher_metrics_port} ({error}); choose "
                "another with --launcher-metrics-port")
            args.launcher_metrics_port = 0
    if (started := _start_fronts(args)) is None:
        return 2
    (http_front, triton_http_port), (grpc_front, triton_grpc_port) = started
    fronts = (http_front, grpc_front)
    key = admin_key(os.environ) if args.restrict_admin else None
    http = TritonHTTP(f"{'127.0.0.1' if http_front else local_host(args.address)}:{triton_http_port}", key)
    options = ServerOptions(
        repository=args.model_repository, ports=Ports(triton_http_port, triton_grpc_port, args.metrics_port),
        address=args.address, http_address="127.0.0.1" if http_front else None,
        grpc_address="127.0.0.1" if grpc_front else None,
        config_name=args.config_name, exit_timeout=args.exit_timeout,
        disable_auto_complete_config=args.disable_auto_complete_config,
        restriction=restriction_args(key) if key else (), extra=args.triton_args,
    )
    compile_python_models(args.model_repository)
    process, reaper = _start_server(server_command(triton, options, models), triton, args.watchdog > 0)
    watchdog: Watchdog | None = None
    gate: ReadinessGate | None = None
    stopping = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        log(f"{signal.Signals(signum).name}: draining, then stopping tritonserver (in {args.exit_timeout} s at most)")
        if watchdog:
            watchdog.stop()
        if stopping or gate is None:  # before it is ready, or asked twice: stop at once
            if process.poll() is None:
                _terminate(process, fronts)
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failed = wait_until_ready(process, http, models, args.startup_timeout)
    if failed and not stopping:
        for name, reason in failed.items():
            log(f"{name} failed to load: {reason}")
        _terminate(process, fronts)
        process.wait()
        return 1
    if not stopping:
        config = f" with config {args.config_name!r}" if args.config_name else ""
        launcher = f", launcher metrics :{args.launcher_metrics_port}" if args.launcher_metrics_port else ""
        log(f"ready: {', '.join(models)}{config}; on {args.address}: HTTP :{args.http_port}, gRPC :{args.grpc_port}, "
            f"metrics :{args.metrics_port}{launcher}")
        gate = ReadinessGate(http, models[-1])
        if args.watchdog > 0:
            watchdog = _start_watchdog(args, http, process.pid, models, gate, metrics, reaper)
    while process.poll() is None and not stopping:
        time.sleep(0.1)
    if process.poll() is None:
        drained = _drain(args, gate, fronts)
        _terminate(process, fronts)
        if drained and watchdog and watchdog.recoveries and _only_dead_versions_left(process, args.model_repository):
            log("tritonserver has unloaded all but the versions whose stub died, which this release never unloads: "
                "stopping it now rather than after its exit timeout")
            process.kill()
            process.wait()
            return 0
    code = process.wait()
    log(f"tritonserver exited with status {code}")
    return code


def _only_dead_versions_left(process: subprocess.Popen, repository: Path, settle: float = 1.0) -> bool:
    """Wait until tritonserver exits (False) or no stub of it has lived for ``settle`` seconds (True): every model
    that could unload has, and what is left are versions with a dead stub, which keep it waiting to the end."""
    quiet_since = time.monotonic()
    while process.poll() is None:
        if living_stubs(process.pid, repository):
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= settle:
            return True
        time.sleep(0.1)
    return False
