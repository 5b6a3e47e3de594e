"""The ocr ensemble from image bytes to text, and the asyncio client demo, against a real server."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from PIL import Image

from str_ocr.contract import LOGITS, MAX_WIDTH, NUM_CLASSES, OCR, POSTPROCESS, PREPROCESS, RECOGNIZER, output_length
from str_ocr.text import encode
from str_ocr_client.requests import image_inputs, tensor, text_of
from str_ocr_client.samples import generated_images
from str_ocr_client.sending import infer_each_now
from str_ocr_client.stats import counts_since, execution_counts

pytestmark = pytest.mark.integration
STEPS = [PREPROCESS, RECOGNIZER, POSTPROCESS]


@pytest.fixture(scope="module")
def server(serve):
    return serve(None, (OCR,))


def read(url: str, blobs: list[bytes], concurrency: int = 16) -> list[object]:
    """(text, confidence), or the error, of each image file sent as its own request."""
    outcomes = infer_each_now(url, OCR, [image_inputs(b) for b in blobs], concurrency)
    return [text_of(o.result) if o.ok else o.result for o in outcomes]


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_the_ensemble_reads_generated_lines(server, fmt):
    items = generated_images(60, seed=77, image_format=fmt)
    assert len({len(i.truth) for i in items}) > 10  # many lengths, 1 to 25 characters
    answers = read(server.grpc_url, [i.data for i in items])
    exact = sum(a[0] == i.truth for a, i in zip(answers, items))
    assert exact >= 0.85 * len(items), f"{exact} of {len(items)} read exactly"
    assert all(0.0 <= a[1] <= 1.0 for a in answers)


def test_concurrent_requests_are_batched_in_every_step(server):
    items = generated_images(96, seed=78, image_format="png")
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = {m: execution_counts(client, m, server.admin_key) for m in STEPS}
        answers = read(server.grpc_url, [i.data for i in items], concurrency=32)
        after = {m: counts_since(client, before[m], len(items), model=m, admin_key=server.admin_key) for m in STEPS}
    assert all(isinstance(a, tuple) for a in answers)
    for model, (inferences, executions) in after.items():
        assert inferences == len(items)
        assert executions < len(items) * 0.75, f"{model}: {executions} executions for {inferences} images"
        print(f"{model}: {executions} executions for {inferences} images")


def _png(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def test_bad_images_fail_alone_while_the_others_are_read(server):
    good = generated_images(30, seed=79, image_format="png")
    bad = {
        "empty": (b"", "IMAGE is empty"),
        "not an image": (b"GIF? no, just text" * 5, "not an image file"),
        "truncated": (good[0].data[: len(good[0].data) // 2], "could not be decoded"),
        "too many pixels": (_png(np.zeros((2100, 2000), np.uint8)), "4,200,000 pixels"),
    }
    blobs = [g.data for g in good[:15]] + [b for b, _ in bad.values()] + [g.data for g in good[15:]]
    answers = read(server.grpc_url, blobs, concurrency=len(blobs))
    for k, (name, (_, message)) in enumerate(bad.items()):
        answer = answers[15 + k]
        assert isinstance(answer, Exception) and message in str(answer), f"{name}: {answer}"
        assert "INVALID_ARG" in str(answer)
    read_ok = [a for a in answers[:15] + answers[19:] if isinstance(a, tuple)]
    assert len(read_ok) == 30
    assert read(server.grpc_url, [good[1].data])[0][0] == good[1].truth  # and it keeps serving


def test_the_postprocess_step_checks_a_clients_logits_like_any_model(server):
    # Every step is callable from outside: bad logits fail alone, INVALID_ARG, while their batch-mates are read.
    steps = output_length(MAX_WIDTH)
    good = np.zeros((1, 26, NUM_CLASSES), np.float32)
    good[0, 1, encode("b")[0]] = 10.0  # blank, "b", then blanks
    poisoned = good.copy()
    poisoned[0, 5, 2] = np.nan
    bad = {"non-finite": (poisoned, "NaN or infinite"),
           "too long": (np.zeros((1, steps + 1, NUM_CLASSES), np.float32), f"{steps + 1} time steps"),
           "no time step": (np.zeros((1, 0, NUM_CLASSES), np.float32), "0 time steps")}
    arrays = [good] * 6 + [a for a, _ in bad.values()] + [good] * 6
    outcomes = infer_each_now(server.grpc_url, POSTPROCESS, [[tensor(LOGITS, a)] for a in arrays], len(arrays))
    for k, (name, (_, message)) in enumerate(bad.items()):
        error = outcomes[6 + k].result
        assert not outcomes[6 + k].ok and message in str(error) and "INVALID_ARG" in str(error), f"{name}: {error}"
    assert [text_of(o.result)[0] for o in outcomes[:6] + outcomes[9:]] == ["b"] * 12


def demo(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "client.demo", *args], capture_output=True, text=True, timeout=timeout)


def test_the_client_demo_reads_and_summarises(server):
    result = demo("--url", server.grpc_url, "--count", "24", "--format", "jpeg")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sum("confidence" in line for line in lines) == 24
    assert any(line.startswith("summary: 24 of 24 images read") and "images/s" in line for line in lines)
    assert any("latency p50" in line and "p95" in line for line in lines)
    accuracy = next(line for line in lines if "accuracy" in line)
    assert float(accuracy.split("accuracy ")[1].split("%")[0]) >= 85


def test_the_client_demo_reads_a_folder_and_reports_failures(server, tmp_path):
    for item in generated_images(5, seed=80, image_format="png"):
        (tmp_path / f"{item.name.split('.')[0]}_{item.truth}.png").write_bytes(item.data)
    (tmp_path / "broken_x.png").write_bytes(b"not a png")
    result = demo("--url", server.grpc_url, "--images", str(tmp_path), "-q")
    assert result.returncode == 1
    assert "summary: 5 of 6 images read" in result.stdout and "summary: 1 failed" in result.stdout


def test_the_client_demo_exit_codes_without_a_server_or_model(server):
    missing = demo("--url", server.grpc_url, "--model", "no_such_model", "--timeout", "2", "-q")
    assert missing.returncode == 3 and "not ready" in missing.stderr
    unreachable = demo("--url", "127.0.0.1:9", "--timeout", "2", "-q")
    assert unreachable.returncode == 2 and "cannot reach a Triton server" in unreachable.stderr
    assert "Traceback" not in missing.stderr + unreachable.stderr
    help_text = demo("--help").stdout
    for option in ("--url", "--model", "--images", "--count", "--format", "--seed", "--concurrency", "--timeout", "--quiet"):
        assert option in help_text
