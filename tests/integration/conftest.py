"""One real tritonserver per configuration, shared by every test that asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import tritonclient.grpc as grpcclient

from scripts.serve import ServerProcess

LOGS = Path(__file__).parents[1] / ".logs"
VARIANTS = ["no_batching", "dynamic_batching", "dynamic_batching_2_instances", "queue_delay_100us", "ragged_batching"]
RECOMMENDED = "config.pbtxt"


@pytest.fixture(scope="session")
def serve():
    """``serve(config_name, models)`` -> a running ServerProcess, started once per (config, models)."""
    running: dict[tuple, ServerProcess] = {}

    def get(config_name: str | None = None, models: tuple[str, ...] = ("text_recognition",)) -> ServerProcess:
        key = (config_name, models)
        if key not in running:
            LOGS.mkdir(exist_ok=True)
            log = LOGS / f"{config_name or 'default'}-{'-'.join(models)}.log"
            running[key] = ServerProcess(config_name=config_name, models=list(models), log_path=log).start()
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
