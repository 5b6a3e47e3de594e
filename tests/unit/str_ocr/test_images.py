"""Encoded image files to recogniser inputs: every mode a PNG or JPEG can have, and every way it can be bad."""

import io

import numpy as np
import pytest
from PIL import Image

from str_ocr import INPUT_HEIGHT, InputError, LineLimits, normalize
from str_ocr.contract import LINE_STRETCH
from str_ocr.images import ImageLimits, image_to_line, images_to_lines, open_image, to_grey


def encode(image: Image.Image, fmt: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def as_row(data: bytes) -> np.ndarray:
    return np.frombuffer(data, np.uint8)[np.newaxis]


GREY = np.tile(np.linspace(0, 255, 120).astype(np.uint8), (40, 1))  # a 120x40 horizontal ramp
GREY_WIDTH = round(96 * LINE_STRETCH)  # 120x40 scaled to 32 high is 96 wide at its aspect ratio


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "P", "I;16", "LA", "1"])
def test_every_mode_becomes_the_same_grey_line(mode):
    base = Image.fromarray(GREY, "L")
    if mode == "I;16":
        image = Image.fromarray(GREY.astype(np.uint16) * 257)
    elif mode == "1":
        image = base.point(lambda v: 255 if v > 127 else 0).convert("1")
    else:
        image = base.convert(mode)
    line = image_to_line(encode(image))
    assert line.shape == (1, INPUT_HEIGHT, GREY_WIDTH) and line.dtype == np.float32
    assert image_to_line(encode(image), lines=LineLimits(stretch=1.0)).shape == (1, INPUT_HEIGHT, 96)
    expected = image_to_line(encode(base)) if mode != "1" else None
    if expected is not None:
        np.testing.assert_allclose(line, expected, atol=2 / 127.5)


def test_transparency_is_laid_over_white():
    ink = Image.new("RGBA", (64, 32), (0, 0, 0, 0))  # fully transparent
    assert to_grey(ink).getextrema() == (255, 255)


def test_jpeg_and_png_read_alike():
    png, jpeg = image_to_line(encode(Image.fromarray(GREY))), image_to_line(encode(Image.fromarray(GREY), "JPEG"))
    assert np.abs(png - jpeg).mean() < 0.02


def test_widths_are_kept_within_the_recogniser_limits():
    wide = Image.fromarray(np.full((10, 5000), 200, np.uint8))
    assert image_to_line(encode(wide), lines=LineLimits(max_width=800)).shape == (1, 32, 800)
    np.testing.assert_allclose(image_to_line(encode(wide), lines=LineLimits(max_width=800)),
                               normalize(np.full((1, 32, 800), 200)))
    tall = Image.fromarray(np.full((500, 3), 0, np.uint8))
    assert image_to_line(encode(tall)).shape == (1, 32, 4)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "IMAGE is empty"),
        (b"this is not an image at all", "not an image file"),
        (encode(Image.fromarray(GREY))[:60], "could not be decoded"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not an image file"),
    ],
    ids=["empty", "not-an-image", "truncated", "broken-header"],
)
def test_bad_files_raise_input_errors(data, message):
    with pytest.raises(InputError, match=message):
        image_to_line(data)


def test_too_many_bytes():
    with pytest.raises(InputError, match="bytes; the limit is 100"):
        open_image(encode(Image.fromarray(GREY)), ImageLimits(max_bytes=100))


def test_too_many_pixels_is_refused_from_the_header_before_decoding():
    huge = encode(Image.new("1", (5000, 2000)))
    assert len(huge) < 20_000  # small on the wire, 10 M pixels once decoded
    with pytest.raises(InputError, match=r"5000x2000 \(10,000,000 pixels\); the limit is 4,000,000"):
        open_image(huge)
    # Only the header is needed to refuse it: the first 100 bytes give the same answer, not a decoding error.
    with pytest.raises(InputError, match="10,000,000 pixels"):
        open_image(huge[:100])


def test_a_request_of_several_images():
    two = np.stack([as_row(encode(Image.fromarray(GREY)))[0]] * 2)
    assert images_to_lines(two).shape == (2, 1, 32, GREY_WIDTH)
    other = encode(Image.fromarray(GREY[:, :60]))
    first = encode(Image.fromarray(GREY))
    length = max(len(first), len(other))
    rows = np.zeros((2, length), np.uint8)
    rows[0, : len(first)], rows[1, : len(other)] = np.frombuffer(first, np.uint8), np.frombuffer(other, np.uint8)
    with pytest.raises(InputError, match="send one image per request"):
        images_to_lines(rows)
    with pytest.raises(InputError, match="UINT8"):
        images_to_lines(np.zeros((1, 10), np.float32))
