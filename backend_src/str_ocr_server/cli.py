"""Run the real ``tritonserver`` on this model repository, in the foreground: ``python -m str_ocr_server --help``.

It finds a server (``$TRITONSERVER_HOME``, the NGC container's ``/opt/tritonserver``, or the one the
``nvidia-pytriton`` wheel ships in this virtualenv), loads the models whose backend that server has
(skipping the others with a message), waits until they are ready, starts the server again if it exits by
itself, and stops it cleanly on SIGTERM or SIGINT. It exits non-zero when a requested model fails to load.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_client.http import ADMIN_HEADER
from str_ocr_triton.config import default_repository

from .admin import ADMIN_APIS, ADMIN_KEY_ENV, ADMIN_KEY_FILE_ENV, admin_key
from .compat import overflow_fixed
from .compat.listen_policy import ACCEPT_FLAG, addresses, refusal
from .metrics import LAUNCHER_METRICS_PORT
from .repository import plan_models
from .supervisor import WATCH_INTERVAL, Supervisor, log
from .triton import Triton, find_triton, server_version

MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The largest HTTP body or gRPC message taken by default: an 8 MiB image (the ensemble's limit) in JSON, with room."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m str_ocr_server", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for add_arguments in (_add_model_arguments, _add_listening_arguments, _add_lifecycle_arguments):
        add_arguments(parser)
    parser.add_argument("triton_args", nargs="*", help="further tritonserver options, after --")
    args = parser.parse_args(argv)
    if args.restarts < 0 or args.restart_window <= 0:
        parser.error("--restarts must be 0 or more and --restart-window more than 0 seconds")
    args.model_repository = args.model_repository.resolve()
    return args


def model_names(text: str) -> list[str]:
    """``--models``' comma-separated names, empty ones left out."""
    return [name for name in text.split(",") if name]


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("models")
    group.add_argument("--model-repository", type=Path, default=default_repository(),
                       help="model repository (default: %(default)s)")
    group.add_argument("--config-name",
                       help="config variant: model/configs/NAME.pbtxt where a model has one, else its config.pbtxt")
    group.add_argument("--models", type=model_names,
                       help="comma-separated models to load (default: all)")
    group.add_argument("--disable-auto-complete-config", action="store_true",
                       help="pass --disable-auto-complete-config: serve the configs exactly as written")


def _add_listening_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("listening and access")
    group.add_argument("--address", default="127.0.0.1",
                       help="where HTTP, gRPC and both metrics endpoints listen (default: %(default)s; 0.0.0.0: every "
                            f"interface, which a server with a known vulnerability takes only with {ACCEPT_FLAG})")
    group.add_argument(ACCEPT_FLAG, action="store_true",
                       help="listen beyond loopback even with a server that one malformed request can take a model "
                            "down with (str_ocr_server.compat.listen_policy)")
    group.add_argument("--http-port", type=int, metavar="PORT", default=DEFAULT_PORTS.http,
                       help="the HTTP/REST port clients use (default: %(default)s)")
    group.add_argument("--http-max-body-bytes", type=int, default=MAX_REQUEST_BYTES, metavar="N",
                       help="refuse (413) an HTTP request body larger than this, before it is read whole "
                            "(default: %(default)s)")
    group.add_argument("--no-http-guard", action="store_true",
                       help="serve tritonserver's own HTTP endpoint on --http-port, without the launcher's proxy "
                            "(str_ocr_server.compat.http_proxy): no body bound, 500 for malformed JSON, overflowing "
                            "shapes passed to the models, no retry of requests a dead instance failed")
    group.add_argument("--grpc-port", type=int, metavar="PORT", default=DEFAULT_PORTS.grpc,
                       help="the gRPC port clients use (default: %(default)s)")
    group.add_argument("--grpc-max-message-bytes", type=int, default=MAX_REQUEST_BYTES, metavar="N",
                       help="refuse (RESOURCE_EXHAUSTED) a gRPC message larger than this (default: %(default)s)")
    group.add_argument("--no-grpc-guard", action="store_true",
                       help="serve tritonserver's own gRPC endpoint on --grpc-port, without the launcher's proxy "
                            "(str_ocr_server.compat.grpc_proxy), which a server before 2.67 gets by default: faster, "
                            "but overflowing shapes reach the models, so it listens beyond loopback only with "
                            f"{ACCEPT_FLAG}")
    group.add_argument("--metrics-port", type=int, metavar="PORT", default=DEFAULT_PORTS.metrics,
                       help="tritonserver's Prometheus metrics port (default: %(default)s)")
    group.add_argument("--launcher-metrics-port", type=int, metavar="PORT", default=LAUNCHER_METRICS_PORT,
                       help="port of the launcher's own Prometheus metrics, the watchdog's recoveries (0: none; "
                            "default: %(default)s)")
    group.add_argument("--restrict-admin", action="store_true",
                       help=f"put the administrative APIs ({','.join(ADMIN_APIS)}) behind the header "
                            f"'{ADMIN_HEADER}': the contents of the file ${ADMIN_KEY_FILE_ENV}, else the value of "
                            f"${ADMIN_KEY_ENV}, else a key generated now and known only to this launcher")


def _add_lifecycle_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("lifecycle")
    group.add_argument("--startup-timeout", metavar="SECONDS", type=float, default=300,
                       help="seconds to wait for the models (default: %(default)s)")
    group.add_argument("--exit-timeout", metavar="SECONDS", type=int, default=30,
                       help="on SIGTERM, seconds in-flight requests get to finish (default: %(default)s)")
    group.add_argument("--watchdog", type=float, default=WATCH_INTERVAL, metavar="SECONDS",
                       help=f"watch every stub process this often, at most {WATCH_INTERVAL} s apart, and replace the "
                            "instance whose stub died, not ready meanwhile (0: off; default: %(default)s)")
    group.add_argument("--restarts", type=int, default=5, metavar="N",
                       help="start tritonserver again after it exits by itself (a crash, an out-of-memory kill), at "
                            "most N times within --restart-window, then exit non-zero (default: %(default)s)")
    group.add_argument("--restart-window", type=float, default=600, metavar="SECONDS",
                       help="the window --restarts counts in (default: %(default)s)")


def proxied_protocols(args: argparse.Namespace, version: tuple[int, int] | None) -> list[str]:
    """The protocols the launcher serves itself, in front of tritonserver: both for a server before the overflow fix
    (``compat``), HTTP also after it (bodies bounded, malformed JSON a 400), unless turned off."""
    wanted = {"http": not args.no_http_guard, "grpc": not args.no_grpc_guard and not overflow_fixed(version)}
    return [protocol for protocol, on in wanted.items() if on]


def refused_addresses(args: argparse.Namespace, version: tuple[int, int] | None, proxied: list[str]) -> list[str]:
    """Why the launcher will not listen where it was asked to: the proxies cover --address; an address given to
    tritonserver itself, or one a proxy is off for, is not covered."""
    unproxied = args.address if len(proxied) < 2 else None
    found = (refusal(a, version, args.accept_known_vulnerability) for a in addresses(unproxied, args.triton_args))
    return [reason for reason in found if reason]


def models_to_serve(args: argparse.Namespace, triton: Triton) -> list[str]:
    """The models this server can load (the others are skipped, saying why); none if a requested one cannot be."""
    models, skipped = plan_models(args.model_repository, args.config_name, triton.backends, args.models)
    for name, reason in skipped.items():
        log(f"skipping {name}: {reason}")
    if args.models and set(args.models) & skipped.keys():
        log(f"cannot serve the requested model(s) {', '.join(sorted(set(args.models) & skipped.keys()))}")
        return []
    if not models:
        log("no model to load")
    return models


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    triton = find_triton()
    version = server_version(triton.binary)
    proxied = proxied_protocols(args, version)
    if refusals := refused_addresses(args, version, proxied):
        log(refusals[0])
        return 2
    if not (models := models_to_serve(args, triton)):
        return 2
    key = admin_key(os.environ) if args.restrict_admin else None
    return Supervisor(args, triton, models, proxied, key).run()


if __name__ == "__main__":
    sys.exit(main())
