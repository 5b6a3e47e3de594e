"""The image's recipe, read statically (the container tests build and run it where Docker is)."""

import re
from pathlib import Path

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_server.metrics import LAUNCHER_METRICS_PORT

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def instructions(name: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(name + " ")]


def test_it_builds_on_a_pinned_tritonserver_release_that_has_model_config_name():
    assert instructions("FROM") == ["${BASE_IMAGE} AS deps", "${BASE_IMAGE}"]  # both stages on the base chosen
    release = re.search(r"^ARG BASE_IMAGE=nvcr.io/nvidia/tritonserver:(\d+)\.(\d+)-py3$", DOCKERFILE, re.M)
    assert release and (int(release.group(1)),
                        int(release.group(2))) >= (23, 6)  # --model-config-name exists since 2.35


def test_it_runs_locked_down_as_the_non_root_user():
    assert instructions("USER") == ["triton-server"]
    assert instructions("EXPOSE") == [" ".join(map(str, (*DEFAULT_PORTS, LAUNCHER_METRICS_PORT)))]
    (healthcheck,) = instructions("HEALTHCHECK")
    assert "/v2/health/ready" in healthcheck
    (entrypoint,) = instructions("ENTRYPOINT")
    for option in ("-m\", \"str_ocr_server", "--restrict-admin", "--watchdog", "--disable-auto-complete-config",
                   "--address\", \"0.0.0.0"):
        assert option in entrypoint
    # Every interface behind the launcher's proxies, which need no flag (str_ocr_server.compat.listen_policy); no
    # default command that options given after the image name would replace.
    assert instructions("CMD") == []


def test_everything_it_copies_exists_and_the_context_stays_small():
    for copy in instructions("COPY"):
        if copy.startswith("--from="):
            continue  # from the build's first stage
        for source in copy.split()[:-1]:
            assert (ROOT / source).exists(), source
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests"} <= set(ignored)
