"""One real tritonserver per configuration, shared by every test that asks for it.

Each server runs either as a local process (the launcher and the nvidia-pytriton server) or in the
project's container image; the container runs are skipped, with the reason, where no Docker engine
is reachable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tritonclient.grpc as grpcclient

from str_ocr.contract import VARIANTS
from str_ocr_server.process import ServerProcess

from .containers import ContainerServer, docker_unavailable

LOGS = Path(__file__).parents[1] / ".logs"
RECOMMENDED = "config.pbtxt"


@pytest.fixture(scope="session", params=["local", "container"])
def server_kind(request) -> str:
    if request.param == "container" and (reason := docker_unavailable()):
        pytest.skip(reason)
    return request.param


def start_server(kind: str, config_name: str | None, models: tuple[str, ...], log_name: str, **options):
    """A started server of ``kind``; ``options``: admin_key, watchdog, exit_timeout."""
    LOGS.mkdir(exist_ok=True)
    server_type = ContainerServer if kind == "container" else ServerProcess
    server = server_type(config_name=config_name, models=list(models), log_path=LOGS / f"{kind}-{log_name}.log",
                         **options)
    return server.start()


@pytest.fixture(scope="session")
def serve(server_kind):
    """``serve(config_name, models, **options)`` -> a running server, started once per distinct request."""
    running: dict[tuple, object] = {}

    def get(config_name: str | None = None, models: tuple[str, ...] = ("text_recognition",), **options):
        key = (config_name, models, tuple(sorted(options.items())))
        if key not in running:
            name = f"{config_name or 'default'}-{'-'.join(models)}" + "".join(f"-{k}" for k in sorted(options))
            running[key] = start_server(server_kind, config_name, models, name, **options)
        return running[key]

    yield get
    for server in running.values():
        server.stop()


def variant_name(variant: str) -> str | None:
    return None if variant == RECOMMENDED else variant


@pytest.fixture(params=[*VARIANTS, RECOMMENDED])
def variant_server(request, serve):
    return serve(variant_name(request.param))


@pytest.fixture
def client(variant_server):
    with grpcclient.InferenceServerClient(variant_server.grpc_url) as c:
        yield c
