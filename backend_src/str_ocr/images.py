"""Encoded image files (PNG, JPEG, ...) to the recogniser's input, with limits checked before decoding.

A served image is untrusted: its size is checked against ``ImageLimits`` from the file's header, before
any pixel is decoded, and every failure is an ``InputError`` that names what is wrong.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image, UnidentifiedImageError

from .contract import PREPROCESS_PARAMETERS
from .errors import InputError
from .preprocess import LineLimits, line_input

WHITE = 255


@dataclass(frozen=True)
class ImageLimits:
    """The largest image accepted: bytes of the file, and pixels (width x height) it decodes to."""

    max_bytes: int = PREPROCESS_PARAMETERS["max_bytes"]
    max_pixels: int = PREPROCESS_PARAMETERS["max_pixels"]


def open_image(data: bytes, limits: ImageLimits = ImageLimits()) -> Image.Image:
    """The decoded image, or ``InputError`` for an empty, oversized, unreadable or truncated file."""
    if not data:
        raise InputError("IMAGE is empty: send the bytes of a PNG or JPEG file")
    if len(data) > limits.max_bytes:
        raise InputError(f"IMAGE is {len(data):,} bytes; the limit is {limits.max_bytes:,}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
            pixels = image.width * image.height
            if pixels > limits.max_pixels:
                raise InputError(
                    f"IMAGE is {image.width}x{image.height} ({pixels:,} pixels); the limit is {limits.max_pixels:,}: "
                    "send a smaller image (for a line, crop it to the text)"
                )
            image.load()
    except InputError:
        raise
    except UnidentifiedImageError:
        raise InputError("IMAGE is not an image file Pillow can read (send PNG or JPEG bytes)") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise InputError(f"IMAGE could not be decoded (truncated or corrupt file?): {error}") from None
    return image


def _flattened(image: Image.Image) -> Image.Image:
    """8 bits a channel, opaque: 16 bits scaled to grey, palettes expanded, transparency over white."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        peak = 65535.0 if image.mode.startswith("I;16") or values.max() > 255 else 255.0
        return Image.fromarray(np.clip(values / peak * 255.0 + 0.5, 0, 255).astype(np.uint8), "L")
    if image.mode == "P":
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        background = Image.new("RGBA", image.size, (WHITE, WHITE, WHITE, 255))
        image = Image.alpha_composite(background, image.convert("RGBA"))
    return image


def to_grey(image: Image.Image) -> Image.Image:
    """8-bit grey (mode ``L``) from any mode: transparency over white, palettes expanded, 16 bits scaled."""
    return _flattened(image).convert("L")


def to_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB from any mode, as ``to_grey``."""
    return _flattened(image).convert("RGB")


def image_to_line(data: bytes, limits: ImageLimits = ImageLimits(), lines: LineLimits = LineLimits()) -> np.ndarray:
    """The recogniser's input ``[1, 32, W]`` for an encoded image of a text line (height 32, ``lines.stretch``
    times as wide as its aspect ratio)."""
    grey = to_grey(open_image(data, limits))
    return line_input(grey, min_width=lines.min_width, max_width=lines.max_width, stretch=lines.stretch)


def images_to_lines(images: np.ndarray, limits: ImageLimits = ImageLimits(),
                    lines: LineLimits = LineLimits()) -> np.ndarray:
    """One request's ``IMAGE`` ``[b, N]`` (uint8 rows, each a whole file) -> ``[b, 1, 32, W]`` lines.

    Rows of one request share a tensor, so they must come out equally wide; send one image per
    request for lines of any width (Triton batches requests, not rows).
    """
    if images.dtype != np.uint8 or images.ndim != 2:
        raise InputError(f"IMAGE must be UINT8 [batch, bytes]; got {images.dtype} {list(images.shape)}")
    decoded = [image_to_line(row.tobytes(), limits, lines) for row in images]
    widths = sorted({line.shape[-1] for line in decoded})
    if len(widths) > 1:
        raise InputError(f"the {len(decoded)} images of this request come out {widths} pixels wide: "
                         "send one image per request")
    return np.stack(decoded)
