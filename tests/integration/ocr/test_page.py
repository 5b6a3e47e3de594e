"""ocr_page, whole images in and every word out, against a real server: readings, no text, many words, and hostile
images each answered alone while the others are read."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from PIL import Image

from str_ocr.contract import OCR_PAGE, RECOGNIZER
from str_ocr.page_scores import PageCounts
from str_ocr.synth import PageSynth
from str_ocr_client.requests import page_inputs, words_of
from str_ocr_client.sending import infer_each_now
from str_ocr_client.stats import counts_since, execution_counts

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(serve):
    return serve(None, (OCR_PAGE,))


@pytest.fixture(scope="module")
def pages():
    synth = PageSynth(seed=2026, fonts="core")
    return [synth.page(background=background, layout=layout)
            for background in ("paper", "flat") for layout in ("scene", "document")]


def read(url, blobs, concurrency=8):
    outcomes = infer_each_now(url, OCR_PAGE, [page_inputs(b) for b in blobs], concurrency)
    return [words_of(o.result) if o.ok else o.result for o in outcomes]


def counts(page, words):
    found = PageCounts()
    found.add(np.stack([w.corners for w in page.words]), [w.text for w in page.words],
              np.stack([w.corners for w in words]) if words else np.zeros((0, 4, 2)), [w.text for w in words])
    return found


def test_pages_of_known_words_are_found_and_read(server, pages):
    answers = read(server.grpc_url, [page.encoded() for page in pages])
    total = PageCounts()
    for page, words in zip(pages, answers):
        assert not isinstance(words, Exception), words
        assert all(0.0 <= w.confidence <= 1.0 and w.corners.shape == (4, 2) for w in words)
        total += counts(page, words)
    print(f"{total.truth} words: recall {total.recall:.3f}, precision {total.precision:.3f}, "
          f"end to end F1 {total.end_to_end_f1:.3f}")
    assert total.recall >= 0.9 and total.precision >= 0.9
    assert total.end_to_end_f1 >= 0.8


def test_words_come_in_reading_order(server, pages):
    document = next(page for page in pages if page.layout == "document")
    (words,) = read(server.grpc_url, [document.encoded()])
    texts = [w.text for w in words]
    truth = [w.text for w in document.words]
    in_order = [t for t in texts if t in truth]
    assert len(in_order) >= 0.8 * len(truth)
    positions = [truth.index(t) for t in in_order]
    assert sum(a < b for a, b in zip(positions, positions[1:])) >= 0.9 * (len(positions) - 1)


def png(image):
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_an_image_without_text_is_no_words_not_an_error(server):
    blank, flat = png(Image.new("RGB", (640, 480), "white")), png(Image.new("RGB", (300, 200), (40, 90, 160)))
    for words in read(server.grpc_url, [blank, flat]):
        assert words == []


def test_a_page_of_300_words_is_answered(server):
    page = PageSynth(seed=7, fonts="core", size=(1800, 1400), max_angle=0).page(words=300, background="paper",
                                                                                  layout="document")
    assert len(page.words) == 300
    (words,) = read(server.grpc_url, [page.encoded()])
    assert not isinstance(words, Exception), words
    assert counts(page, words).recall >= 0.9


def bomb_png(width, height):
    """A valid PNG header for a huge image of zeros: a few kilobytes that would decode to width x height pixels."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(b"\0" * (1 + width) * 64, 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) + \
        chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def tiny_words(count):
    """A valid image holding ``count`` words, each a few pixels high."""
    synth = PageSynth(seed=11, fonts="core", size=(1600, 1600), max_angle=0)
    return synth.page(words=count, background="flat", layout="document")


def test_hostile_images_are_refused_or_bounded_alone_while_other_pages_are_read(server, pages):
    jpeg = pages[0].encoded("JPEG")
    crowded = png(Image.fromarray(np.tile(np.asarray(Image.open(io.BytesIO(pages[3].encoded())))[:200:4, ::4],
                                          (10, 8, 1))))
    hostile = {
        "decompression bomb": bomb_png(30_000, 30_000),
        "100,000 x 1": png(Image.new("L", (100_000, 1), 128)),
        "crowded": crowded,
        "truncated JPEG": jpeg[: len(jpeg) // 2],
    }
    good = [page.encoded() for page in pages]
    answers = read(server.grpc_url, good[:2] + list(hostile.values()) + good[2:], concurrency=8)
    bomb, sliver, many, truncated = answers[2:6]
    assert isinstance(bomb, Exception) and "pixels" in str(bomb) and "INVALID_ARG" in str(bomb)
    assert sliver == []
    assert not isinstance(many, Exception) and 0 < len(many) <= 500 + 100  # max_boxes lines, cut into words
    assert isinstance(truncated, Exception) and "INVALID_ARG" in str(truncated)
    for page, words in zip(pages, answers[:2] + answers[6:]):
        assert not isinstance(words, Exception) and counts(page, words).recall >= 0.8


def test_the_crops_of_pages_in_flight_are_pooled_by_the_recognisers_batcher(server, pages):
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = execution_counts(client, RECOGNIZER, server.admin_key)
        answers = read(server.grpc_url, [page.encoded() for page in pages] * 2, concurrency=8)
        words = sum(len(a) for a in answers)
        inferences, executions = counts_since(client, before, words, model=RECOGNIZER, admin_key=server.admin_key)
    assert inferences >= words  # a request per crop (crops read as nothing are not answered words)
    # Unpooled, each crop would be an execution; how many pool depends on the engine's pace against the crops'
    # arrival, so the bound leaves room for the slower-pooling engine auto picks on a CPU without native bf16.
    assert executions < inferences * 2 / 3, f"{executions} executions for {inferences} crops"
    print(f"{inferences} crops in {executions} executions")


def test_a_page_its_client_gives_up_on_sends_no_crops(server):
    """A client that stops waiting (here its deadline passes while the page is detected) cancels the request:
    ocr_page stops before its crops reach text_recognition, and the next page is read as usual."""
    page = PageSynth(seed=9, fonts="core", size=(1800, 1400), max_angle=0).page(words=200, layout="document")
    with grpcclient.InferenceServerClient(server.grpc_url) as client:
        before = execution_counts(client, RECOGNIZER, server.admin_key)
        with pytest.raises(Exception, match="Deadline"):
            client.infer(OCR_PAGE, page_inputs(page.encoded()), client_timeout=0.05)
        (words,) = read(server.grpc_url, [one_word_png()])
        after = execution_counts(client, RECOGNIZER, server.admin_key)
    assert [w.text for w in words] == ["hello"]
    assert after[0] - before[0] < 20  # the 200 words of the cancelled page were never sent


def one_word_png():
    from PIL import ImageDraw, ImageFont

    image = Image.new("RGB", (400, 200), "white")
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 48)
    ImageDraw.Draw(image).text((60, 60), "hello", font=font, fill="black")
    return png(image)
