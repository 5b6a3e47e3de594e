"""What a user of the image does, as the README says: its `docker run`, the demo client through it, `docker stop`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import uuid

import pytest

from str_ocr.contract import DEFAULT_PORTS
from str_ocr_client.http import TritonHTTP

from .containers import PORTS, REPO_ROOT, RUN_OPTIONS, built_image, docker_unavailable

pytestmark = pytest.mark.integration
README_IMAGE = "str-ocr-triton"  # what `make image` tags :latest


def readme_docker_run() -> list[str]:
    """The `docker run` command of the README's "Ship it" section, as arguments."""
    section = (REPO_ROOT / "README.md").read_text().split("## Ship it", 1)[1].split("\n## ", 1)[0]
    (command,) = [line for line in section.replace("\\\n", " ").splitlines() if line.startswith("docker run ")]
    return shlex.split(command, comments=True)


def long_options(args: list[str]) -> list[str]:
    """``--name value`` written as ``--name=value``, as ``RUN_OPTIONS`` has them."""
    joined, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--") and "=" not in arg and i + 1 < len(args) and not args[i + 1].startswith("-"):
            arg, i = f"{arg}={args[i + 1]}", i + 1
        joined.append(arg)
        i += 1
    return joined


def detached(args: list[str], name: str, image: str) -> list[str]:
    """The README's command, run in the background under ``name``, on free ports of 127.0.0.1 only."""
    rest = [a for a in args[2:] if a != "--rm"]  # kept until its exit status is read
    out = ["docker", "run", "-d", "--name", name]
    for i, arg in enumerate(rest):
        if i and rest[i - 1] == "-p":
            arg = f"127.0.0.1::{arg.rsplit(':', 1)[1]}"
        out.append(image if arg == README_IMAGE else arg)
    return out


def docker(*args: str, timeout: float = 120) -> str:
    return subprocess.run(["docker", *args], check=True, capture_output=True, text=True, timeout=timeout).stdout.strip()


def state(name: str) -> dict:
    return json.loads(docker("inspect", "--format", "{{json .State}}", name))


def until(condition, timeout: float, what: str, name: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout:.0f} s; the container's log ends:\n"
                                 f"{docker('logs', '--tail', '30', name)}")
        time.sleep(0.5)


def test_the_readme_runs_the_image_with_the_options_the_tests_use():
    args = readme_docker_run()
    assert args[:2] == ["docker", "run"] and args[-1] == README_IMAGE
    assert set(RUN_OPTIONS) <= set(long_options(args))
    assert {f"{port}:{port}" for port in PORTS} <= set(args)


def test_the_readme_docker_run_serves_the_demo_as_non_root_and_stops_cleanly():
    if reason := docker_unavailable():
        pytest.skip(reason)
    name = f"str-ocr-readme-{uuid.uuid4().hex[:8]}"
    docker(*detached(readme_docker_run(), name, built_image())[1:])
    try:
        ports = {port: int(docker("port", name, str(port)).splitlines()[0].rsplit(":", 1)[1]) for port in PORTS}
        until(TritonHTTP(f"127.0.0.1:{ports[DEFAULT_PORTS.http]}").ready, 300, "ready", name)
        demo = subprocess.run([sys.executable, "-m", "client.demo", "--url", f"127.0.0.1:{ports[DEFAULT_PORTS.grpc]}"],
                              capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
        assert demo.returncode == 0 and "32 of 32 images read" in demo.stdout, demo.stdout[-1500:] + demo.stderr[-1500:]
        assert docker("exec", name, "id", "-u") != "0"
        until(lambda: state(name)["Health"]["Status"] == "healthy", 90, "healthy", name)
        docker("stop", "--time", "60", name)
        assert state(name)["ExitCode"] == 0
        assert "SIGTERM: draining, then stopping tritonserver" in subprocess.run(["docker", "logs", name],
                                                                                 capture_output=True, text=True).stderr
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
