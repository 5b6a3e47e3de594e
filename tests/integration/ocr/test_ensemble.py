"""The ocr ensemble from image bytes to text, and the asyncio client demo, against a real server."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from PIL import Image, ImageDraw, ImageFont

from str_ocr import Recognizer
from str_ocr.contract import (LINE, LOGITS, MAX_WIDTH, NUM_CLASSES, OCR, POSTPROCESS, PREPROCESS, READ_AGAIN_BELOW,
                              RECOGNIZER, SECOND_RECOGNIZER, output_length)
from str_ocr.images import ImageLimits, images_to_lines
from str_ocr.preprocess import LineLimits, denormalize, line_input
from str_ocr.read_again import read_again_where_unsure
from str_ocr.text import encode
from str_ocr_client.requests import image_inputs, tensor, text_of
from str_ocr_client.samples import generated_images
from str_ocr_client.sending import infer_each_now
from str_ocr_client.stats import counts_since, execution_counts, metric_total
from str_ocr_triton.metric_labels import READ_AGAIN_COUNTER

from ..helpers import admin_headers, in_process_engine, served_config

pytestmark = pytest.mark.integration
STEPS = [PREPROCESS, RECOGNIZER, POSTPROCESS]
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


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


def read_again_total(server) -> float:
    return metric_total(server.metrics_url, READ_AGAIN_COUNTER[0], model=POSTPROCESS)


def test_concurrent_requests_are_batched_in_every_step(server):
    items = generated_images(96, seed=78, image_format="png")
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = {m: execution_counts(client, m, server.admin_key) for m in STEPS}
        second_before = second_inferences(client, server)
        read_before = read_again_total(server)
        answers = read(server.grpc_url, [i.data for i in items], concurrency=32)
        after = {m: counts_since(client, before[m], len(items), model=m, admin_key=server.admin_key) for m in STEPS}
        read_again = int(read_again_total(server) - read_before)
        second = second_inferences(client, server) - second_before
    assert all(isinstance(a, tuple) for a in answers) and read_again > 0
    for model, (inferences, executions) in after.items():
        # The recogniser reads each line once, and each line read again at the two other stretches (fewer where the
        # widths clamp one: none of these lines is that narrow or wide).
        assert inferences == len(items) + (2 * read_again if model == RECOGNIZER else 0)
        assert executions < len(items) * 0.75, f"{model}: {executions} executions for {inferences} images"
        print(f"{model}: {executions} executions for {inferences} images")
    # The second weights read each of those lines as served and as the recogniser read them again.
    assert second == read_again + (after[RECOGNIZER][0] - len(items))


def second_inferences(client, server) -> int:
    """How many lines the second recogniser has read (its only version's inference count)."""
    stats = client.get_inference_statistics(SECOND_RECOGNIZER, headers=admin_headers(server), as_json=True)
    return int(stats["model_stats"][0].get("inference_count", 0))


def test_the_ensemble_reads_as_its_first_and_second_weights_do_in_process(server):
    # Generated lines in faces of every kind: enough of them unsure that the second weights change some readings.
    items = generated_images(60, seed=81, image_format="png")
    served = read(server.grpc_url, [i.data for i in items])
    first, second = (Recognizer(in_process_engine(served_config(server, model)), max_padding=0)
                     for model in (RECOGNIZER, SECOND_RECOGNIZER))
    # The lines as ocr_preprocess makes them, and as ocr_postprocess takes them back to grey.
    files = [np.frombuffer(i.data, np.uint8)[np.newaxis] for i in items]
    lines = [denormalize(images_to_lines(file, ImageLimits(), LineLimits())[0, 0]) for file in files]
    alone, _ = read_again_where_unsure(lines, first.read, READ_AGAIN_BELOW)
    local, read_again = read_again_where_unsure(lines, first.read, READ_AGAIN_BELOW, second=second.read)
    assert [a[0] for a in served] == [r.text for r in local]
    assert [a[1] for a in served] == pytest.approx([r.confidence for r in local], abs=1e-3)
    assert read_again > 0 and local != alone, "the second weights changed no reading: the test shows nothing"


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


def word_line(text: str) -> np.ndarray:
    """``text`` drawn as a line and made ocr_preprocess's way into the recogniser's input ``[1, 1, 32, W]``."""
    image = Image.new("L", (40 + 30 * len(text), 64), 255)
    ImageDraw.Draw(image).text((20, 4), text, font=ImageFont.truetype(DEJAVU, 48), fill=0)
    return line_input(image)[np.newaxis]


def unsure_logits(line: np.ndarray) -> np.ndarray:
    """Logits for ``line`` saying "a" at every time step, by a hair: far less sure than read_again_below."""
    logits = np.zeros((1, output_length(line.shape[-1]), NUM_CLASSES), np.float32)
    logits[0, :, encode("a")[0]] = 0.1
    return logits


def test_the_postprocess_step_reads_the_unsure_lines_it_is_given_again_through_the_recogniser(server):
    line = word_line("hello")
    requests = [[tensor(LOGITS, unsure_logits(line)), tensor(LINE, line)],  # read again: the line says "hello"
                [tensor(LOGITS, unsure_logits(line))]]  # no line: read once
    before = read_again_total(server)
    (again, once) = infer_each_now(server.grpc_url, POSTPROCESS, requests, 2)
    assert text_of(again.result)[0] == "hello" and text_of(again.result)[1] > 0.7
    assert text_of(once.result)[0] == "a" and text_of(once.result)[1] < 0.1
    assert read_again_total(server) - before == 1


def test_the_postprocess_step_checks_the_lines_it_is_given_like_any_input(server):
    line = word_line("hello")
    bad = {"a time step short": (line[..., :-4], "time steps; LOGITS has"),
           "non-finite": (np.full_like(line, np.nan), "NaN or infinite"),
           "not 32 high": (line[:, :, :16], "LINE")}  # refused by Triton itself, as the config's dims say
    good = [[tensor(LOGITS, unsure_logits(line)), tensor(LINE, line)]] * 4
    requests = good + [[tensor(LOGITS, unsure_logits(line)), tensor(LINE, b)] for b, _ in bad.values()] + good
    outcomes = infer_each_now(server.grpc_url, POSTPROCESS, requests, len(requests))
    for k, (name, (_, message)) in enumerate(bad.items()):
        error = outcomes[4 + k].result
        assert not outcomes[4 + k].ok and message in str(error) and "INVALID_ARG" in str(error), f"{name}: {error}"
    assert [text_of(o.result)[0] for o in outcomes[:4] + outcomes[7:]] == ["hello"] * 8


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
    for option in ("--url", "--model", "--images", "--count", "--format", "--seed", "--concurrency", "--timeout",
                   "--quiet"):
        assert option in help_text
