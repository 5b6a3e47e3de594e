"""The plain path: ``tritonserver`` started directly on ``model_repository/``, no launcher, with its defaults.

What a Triton user types. In a checkout, after ``make setup`` (the first line lays out ``.venv/triton_backends``:
the wheel's Python backend and the stub for the venv's Python)::

    .venv/bin/python -c "from str_ocr_server.triton import find_triton; find_triton()"
    PATH="$PWD/.venv/bin:$PATH" LD_LIBRARY_PATH="$PWD/.venv/lib/python3.11/site-packages/nvidia_pytriton.libs" \\
      "$PWD/.venv/lib/python3.11/site-packages/pytriton/tritonserver/bin/tritonserver" \\
      --model-repository "$PWD/model_repository" --backend-directory "$PWD/.venv/triton_backends"

With the CPU image (``make image``), whose build lays out the same backend directory::

    docker run --rm --shm-size=256m --ulimit=memlock=8388608 --ulimit=stack=67108864 \\
      -p 8000:8000 -p 8001:8001 -p 8002:8002 \\
      -e LD_LIBRARY_PATH=/opt/venv/lib/python3.11/site-packages/nvidia_pytriton.libs \\
      --entrypoint /opt/venv/lib/python3.11/site-packages/pytriton/tritonserver/bin/tritonserver \\
      str-ocr-triton:cpu \\
      --model-repository /opt/str_ocr/model_repository --backend-directory /opt/venv/triton_backends

``local_command_line()`` and ``docker_command()`` write these for the server the tests run; the tests run them on
free ports of 127.0.0.1, read lines through ``text_recognition`` (HTTP) and ``ocr`` (gRPC), and stop the server
with SIGTERM, as ``docker stop`` and orchestrators do.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient
from PIL import Image

from str_ocr.contract import INPUT_NAME, OCR, OUTPUT_NAME, RECOGNIZER, TUTORIAL_WIDTH
from str_ocr.preprocess import normalize
from str_ocr.synth import TextLineSynth
from str_ocr.text import greedy_decode_batch
from str_ocr_client.http import TritonHTTP
from str_ocr_client.readiness import wait_for
from str_ocr_client.requests import image_inputs, text_of
from str_ocr_client.sending import infer_each_now
from str_ocr_server.process import free_ports
from str_ocr_server.triton import Triton, find_triton

from .containers import IMAGE_TAG, LOOPBACK, REPO_ROOT, RUN_OPTIONS, built_image, docker_unavailable

pytestmark = pytest.mark.integration
REPOSITORY = REPO_ROOT / "model_repository"
LOGS = REPO_ROOT / "tests" / ".logs"
WORDS = ["triton", "hello", "2024", "text42"]
STARTUP_TIMEOUT = 600  # every model of the repository loads, each instance a Python process; a busy machine is slow
STOP_TIMEOUT = 90  # tritonserver's own --exit-timeout-secs is 30

# Where the CPU image keeps the wheel's server (the Dockerfile lays out its backend directory with find_triton()).
IMAGE_SITE_PACKAGES = "/opt/venv/lib/python3.11/site-packages"
IMAGE_TRITONSERVER = f"{IMAGE_SITE_PACKAGES}/pytriton/tritonserver/bin/tritonserver"
IMAGE_LIBRARIES = f"{IMAGE_SITE_PACKAGES}/nvidia_pytriton.libs"
IMAGE_BACKENDS = "/opt/venv/triton_backends"
IMAGE_REPOSITORY = "/opt/str_ocr/model_repository"
TRITON_PORTS = (8000, 8001, 8002)  # HTTP, gRPC, metrics: tritonserver's defaults
SAME_PORTS = tuple(f"{port}:{port}" for port in TRITON_PORTS)


def in_checkout(path: Path | str) -> str:
    """``path`` as a user in the checkout's root writes it."""
    path = Path(path)
    return f"$PWD/{path.relative_to(REPO_ROOT)}" if path.is_relative_to(REPO_ROOT) else str(path)


def local_command_line(triton: Triton) -> str:
    """The shell line that runs ``triton`` on the repository with tritonserver's defaults, from the checkout's root."""
    libraries = triton.env.get("LD_LIBRARY_PATH", "").split(os.pathsep)[0]
    return (f'PATH="{in_checkout(sys.prefix)}/bin:$PATH" LD_LIBRARY_PATH="{in_checkout(libraries)}" '
            f'"{in_checkout(triton.binary)}" --model-repository "{in_checkout(REPOSITORY)}" '
            f'--backend-directory "{in_checkout(triton.backend_dir)}"')


def docker_command(image: str = IMAGE_TAG, publish: Sequence[str] = SAME_PORTS) -> list[str]:
    """``docker run`` of the image with tritonserver, instead of the launcher, as its entrypoint."""
    return ["docker", "run", "--rm", *RUN_OPTIONS, *(arg for port in publish for arg in ("-p", port)),
            "-e", f"LD_LIBRARY_PATH={IMAGE_LIBRARIES}", "--entrypoint", IMAGE_TRITONSERVER, image,
            "--model-repository", IMAGE_REPOSITORY, "--backend-directory", IMAGE_BACKENDS]


class PlainServer:
    """A command that runs tritonserver in the foreground, reached on ``http_port`` and ``grpc_port`` of 127.0.0.1."""

    def __init__(self, command: list[str], env: dict[str, str] | None, http_port: int, grpc_port: int, log_name: str,
                 container: str | None = None):
        self.command, self.env, self.container = command, env, container
        self.http_url, self.grpc_url = f"{LOOPBACK}:{http_port}", f"{LOOPBACK}:{grpc_port}"
        LOGS.mkdir(exist_ok=True)
        self.log_path = LOGS / f"plain-{log_name}.log"
        self.process: subprocess.Popen | None = None

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def start(self) -> PlainServer:
        print(f"plain tritonserver: {shlex.join(self.command)}")
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(TritonHTTP(self.http_url).ready, STARTUP_TIMEOUT, "plain tritonserver", gone=self._exited)
        except RuntimeError as error:
            self.stop()
            raise RuntimeError(f"{error}\n{self.log_tail()}") from None
        return self

    def _exited(self) -> str | None:
        return None if self.process.poll() is None else f"exited with status {self.process.returncode}"

    def stop(self) -> int | None:
        """SIGTERM (``docker run`` passes it on to the container); the exit status, or None if it had to be killed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.container:  # gone already, unless the docker client had to be killed
            subprocess.run(["docker", "rm", "--force", self.container], capture_output=True, timeout=60)
        return self.process.returncode if self.process.returncode >= 0 else None


def local_server() -> PlainServer:
    """The wheel's tritonserver in the venv, in the environment find_triton() documents."""
    triton = find_triton()
    print(f"as a user types it, in the checkout: {local_command_line(triton)}")
    http, grpc, metrics = free_ports(3)
    command = [str(triton.binary), f"--model-repository={REPOSITORY}", f"--backend-directory={triton.backend_dir}",
               f"--http-port={http}", f"--grpc-port={grpc}", f"--metrics-port={metrics}"]
    return PlainServer(command, triton.env, http, grpc, "local")


def container_server() -> PlainServer:
    """The CPU image with tritonserver as its entrypoint, its ports published on free ports of 127.0.0.1."""
    if reason := docker_unavailable():
        pytest.skip(reason)
    print(f"as a user types it: {shlex.join(docker_command())}")
    ports = free_ports(len(TRITON_PORTS))
    publish = [f"{LOOPBACK}:{host}:{inside}" for host, inside in zip(ports, TRITON_PORTS)]
    name = f"str-ocr-plain-{uuid.uuid4().hex[:8]}"
    command = docker_command(built_image(), publish)
    command[2:2] = ["--name", name]  # to remove it should the docker client itself die
    return PlainServer(command, None, ports[0], ports[1], "container", container=name)


@pytest.fixture(scope="module", params=["local", "container"])
def plain_server(request):
    server = {"local": local_server, "container": container_server}[request.param]()
    yield server.start()
    server.stop()


def rendered(width: int | None = None) -> list[np.ndarray]:
    """Grey ``[32, W]`` lines of ``WORDS`` by the project's line generator: ``width`` wide, or their natural widths."""
    synth = TextLineSynth(seed=1)
    return [synth.render(word, width) for word in WORDS]


def png(line: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(line).save(buffer, "PNG")
    return buffer.getvalue()


def test_text_recognition_reads_the_tutorials_32x100_lines_over_http(plain_server):
    batch = normalize(np.stack(rendered(TUTORIAL_WIDTH))[:, np.newaxis])
    request = httpclient.InferInput(INPUT_NAME, list(batch.shape), "FP32")
    request.set_data_from_numpy(batch)
    with httpclient.InferenceServerClient(plain_server.http_url) as client:
        logits = client.infer(RECOGNIZER, [request]).as_numpy(OUTPUT_NAME)
    assert logits.shape == (len(WORDS), 26, 37)
    assert [reading.text for reading in greedy_decode_batch(logits)] == WORDS


def test_the_ocr_ensemble_reads_png_files_over_grpc(plain_server):
    outcomes = infer_each_now(plain_server.grpc_url, OCR, [image_inputs(png(line)) for line in rendered()])
    assert all(o.ok for o in outcomes), [o.result for o in outcomes if not o.ok]
    assert [text_of(o.result)[0] for o in outcomes] == WORDS


def test_sigterm_stops_the_server_with_status_0(plain_server):
    """Runs last in this module: the server stops here."""
    assert plain_server.stop() == 0, plain_server.log_tail()
