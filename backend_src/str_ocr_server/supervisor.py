"""tritonserver in the foreground: started, its models awaited, served until SIGTERM or SIGINT, drained, stopped;
started anew behind the same ports when it exits by itself, at most ``--restarts`` times in ``--restart-window``
seconds, answering "unavailable" meanwhile."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from str_ocr.contract import Ports
from str_ocr_client.http import TritonHTTP

from .admin import restriction_args
from .compat.not_ready import Readiness
from .compat.stub_reaper import LIBRARY, StubReaper
from .compat.stub_recovery import Watchdog, served_instances
from .compat.proxy import Proxy
from .compat.stubs import kill_session, only_dead_versions_left, reap_orphans, remove_regions
from .drain import wait_until_idle
from .metrics import LauncherMetrics
from .process import free_ports
from .repository import compile_python_models
from .startup import RestartBudget, dying_with_parent, wait_until_ready
from .triton import ServerOptions, Triton, local_host, server_command

WATCH_INTERVAL = 0.2
"""The longest time between two reads of the stub processes: a dead one is seen within it."""


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


class Supervisor:
    """Serves ``models`` with ``triton`` as ``args`` (``str_ocr_server.cli``) say; ``proxies``: the protocols ("http",
    "grpc") the launcher serves itself, in front of a server that needs it (``compat``)."""

    def __init__(self, args: argparse.Namespace, triton: Triton, models: list[str], proxies: Sequence[str],
                 key: str | None) -> None:
        self.args, self.triton, self.models, self.key = args, triton, models, key
        self.proxy_protocols = proxies
        self.metrics = LauncherMetrics(models)
        self.restarts = RestartBudget(args.restarts, args.restart_window)
        self.serving = threading.Event()
        """Set while the server serves every model: the proxies hold their retries until then."""
        self.stopping = threading.Event()
        self.signals: list[int] = []
        """The signals asked to stop with: a second one stops without draining."""
        self.proxies: dict[str, Proxy] = {}
        self.process: subprocess.Popen | None = None
        self.readiness: Readiness | None = None
        self.watchdog: Watchdog | None = None

    def run(self) -> int:
        """Serve until stopped; the exit status."""
        ports = self._start_proxies()
        if ports is None:
            return 2
        self._serve_metrics()
        upstream = "127.0.0.1" if "http" in self.proxies else local_host(self.args.address)
        self.http = TritonHTTP(f"{upstream}:{ports.http}", self.key)
        self.command = server_command(self.triton, self._options(ports), self.models)
        compile_python_models(self.args.model_repository)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        first = True
        while True:
            code, crashed = self._serve_once(first)
            if not crashed or self.stopping.is_set():
                break
            if not self.restarts.take():
                log(f"tritonserver stopped by itself more than {self.args.restarts} times in "
                    f"{self.args.restart_window:.0f} s: giving up")
                code = code or 1
                break
            self.metrics.restarted()
            pause = self.restarts.pause()
            log(f"starting tritonserver again{f' in {pause:.0f} s' if pause else ''}; requests are answered "
                "'unavailable' until it is ready")
            if self.stopping.wait(pause):
                break
            first = False
        self._stop_proxies()
        return code

    def _options(self, ports: Ports) -> ServerOptions:
        args = self.args
        return ServerOptions(
            repository=args.model_repository, ports=ports, address=args.address,
            http_address="127.0.0.1" if "http" in self.proxies else None,
            grpc_address="127.0.0.1" if "grpc" in self.proxies else None,
            config_name=args.config_name, exit_timeout=args.exit_timeout,
            disable_auto_complete_config=args.disable_auto_complete_config,
            restriction=restriction_args(self.key) if self.key else (), extra=args.triton_args)

    def _start_proxies(self) -> Ports | None:
        """The proxies asked for, each on its public port; the ports tritonserver takes (None, said why, if a proxy
        cannot listen)."""
        from .compat.grpc_proxy import GrpcProxy  # noqa: PLC0415 - only a server that needs a proxy imports them
        from .compat.http_proxy import HttpProxy  # noqa: PLC0415

        args, ports = self.args, {"http": self.args.http_port, "grpc": self.args.grpc_port}
        kinds = {"http": (HttpProxy, args.http_max_body_bytes), "grpc": (GrpcProxy, args.grpc_max_message_bytes)}
        for protocol in self.proxy_protocols:
            (upstream,) = free_ports(1)
            proxy_type, limit = kinds[protocol]
            # Without the watchdog nothing replaces a dead instance: waiting to send again would only delay the error.
            proxy = proxy_type(f"127.0.0.1:{upstream}", limit, self.serving, retry=args.watchdog > 0)
            try:
                proxy.start(args.address, ports[protocol])
            except OSError as error:
                log(f"cannot listen for {protocol} on {args.address}:{ports[protocol]} ({error}); choose another "
                    f"with --{protocol}-port")
                self._stop_proxies()
                return None
            self.proxies[protocol], ports[protocol] = proxy, upstream
        return Ports(ports["http"], ports["grpc"], args.metrics_port)

    def _stop_proxies(self) -> None:
        """Before tritonserver stops: it would wait for the proxies' open HTTP connections."""
        for proxy in self.proxies.values():
            proxy.stop()

    def _serve_metrics(self) -> None:
        if not self.args.launcher_metrics_port:
            return
        try:
            self.metrics.serve(self.args.launcher_metrics_port, self.args.address)
        except OSError as error:
            log(f"serving without the launcher's metrics: port {self.args.launcher_metrics_port} ({error}); choose "
                "another with --launcher-metrics-port")
            self.args.launcher_metrics_port = 0

    def _start_server(self) -> StubReaper | None:
        """tritonserver, in a session of its own, dying with the launcher; with the stub reaper where it is used."""
        watching = self.args.watchdog > 0
        reaper = StubReaper() if watching and LIBRARY.is_file() else None
        if watching and not reaper:
            log(f"stubs that die stay zombies until tritonserver exits: {LIBRARY.name} is not built (make setup)")
        # The library is preloaded into tritonserver alone, not into the wrappers that start it.
        command = dying_with_parent(self.command, reaper.variables(self.triton.env) if reaper else {})
        self.process = subprocess.Popen(command, env=self.triton.env, pass_fds=reaper.pass_fds if reaper else (),
                                        start_new_session=True)
        if reaper:
            reaper.started()
        return reaper

    def _serve_once(self, first: bool) -> tuple[int, bool]:
        """Start tritonserver and serve until it stops: (exit status, whether it stopped by itself)."""
        reaper = self._start_server()
        failed = wait_until_ready(self.process, self.http, self.models, self.args.startup_timeout, self.stopping)
        if failed and not self.stopping.is_set():
            for name, reason in failed.items():
                log(f"{name} failed to load: {reason}")
            self._signal_server()
            self.process.wait()
            self._forget_run(reaper)
            return 1, not first
        if not self.stopping.is_set():
            self._ready(reaper)
        while self.process.poll() is None and not self.stopping.is_set():
            time.sleep(0.1)
            reap_orphans(keep=self.process.pid)
        stopped_by_itself = self.process.poll() is not None and not self.stopping.is_set()
        code = self._stop() if self.process.poll() is None else self.process.returncode
        if stopped_by_itself:
            log(f"tritonserver exited by itself with status {code}")
        self._forget_run(reaper)
        return code, stopped_by_itself

    def _ready(self, reaper: StubReaper | None) -> None:
        args = self.args
        config = f" with config {args.config_name!r}" if args.config_name else ""
        launcher = f", launcher metrics :{args.launcher_metrics_port}" if args.launcher_metrics_port else ""
        log(f"ready: {', '.join(self.models)}{config}; on {args.address}: HTTP :{args.http_port}, gRPC "
            f":{args.grpc_port}, metrics :{args.metrics_port}{launcher}")
        self.readiness = Readiness(self.http, self.models[-1], self.serving)
        self.serving.set()
        if args.watchdog > 0:
            configs = {m: self.http.config(m) for m in self.models}
            for model in (m for m, c in configs.items() if c is None):
                log(f"watchdog: {model}'s configuration could not be read from the server; its stubs are not watched")
            instances = {m: served_instances(c) for m, c in configs.items() if c and c.get("backend") == "python"}
            self.watchdog = Watchdog(self.http, self.process.pid, args.model_repository, instances, self.readiness,
                                     min(args.watchdog, WATCH_INTERVAL), log, self.metrics,
                                     reaper.reap if reaper else None)
            self.watchdog.start()

    def _forget_run(self, reaper: StubReaper | None) -> None:
        """After tritonserver exited: what watched it stops first, so that nothing of this run marks the next one
        ready (nor counts the stubs killed next as deaths); then the regions of its stubs go, the stubs it left
        running are killed, and those handed to this process are reaped."""
        if self.readiness:
            self.readiness.close()
        if self.watchdog:
            self.watchdog.stop()
            remove_regions(self.watchdog.stubs())
        if left := kill_session(self.process.pid):
            log(f"killed {left} process(es) that outlived tritonserver (stubs stuck without it)")
        self.serving.clear()
        self.watchdog = self.readiness = None
        if reaper:
            reaper.release()
        reap_orphans()

    def _on_signal(self, signum: int, _frame: object) -> None:
        # Only flags here: the main thread does the stopping (and the logging) where it looks.
        self.signals.append(signum)
        self.stopping.set()

    def _signal_server(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def _stop(self) -> int:
        """Not ready, then wait (at most --exit-timeout) until nothing is in flight, then stop tritonserver."""
        name = signal.Signals(self.signals[0]).name if self.signals else "stop"
        log(f"{name}: draining, then stopping tritonserver (in {self.args.exit_timeout} s at most)")
        if self.watchdog:
            self.watchdog.stop()
        for proxy in self.proxies.values():
            proxy.stopping.set()  # requests held for a retry are answered now
        drained = self._drain()
        self._stop_proxies()
        self._signal_server()
        if drained and self.watchdog and self.watchdog.recoveries and only_dead_versions_left(self.process,
                                                                                              self.args.model_repository):
            log("tritonserver has unloaded all but the versions whose stub died, which this release never unloads: "
                "stopping it now rather than after its exit timeout")
            self.process.kill()
            self.process.wait()
            return 0
        code = self.process.wait()
        log(f"tritonserver exited with status {code}")
        return code

    def _drain(self) -> bool:
        if self.readiness is None:
            return False
        self.readiness.mark_not_ready("stopping")
        start = time.monotonic()
        idle = wait_until_idle(f"{local_host(self.args.address)}:{self.args.metrics_port}", self.args.exit_timeout,
                               stopped=lambda: len(self.signals) > 1,
                               busy=lambda: any(p.in_flight for p in self.proxies.values()))
        log(f"drained in {time.monotonic() - start:.1f} s" if idle
            else "could not see the server idle; stopping it anyway")
        return idle
