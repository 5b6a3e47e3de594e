"""A read page, drawn: the image with each word's box and its reading over it, for a person to check at a glance."""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

from .requests import PageWord

BOX = (230, 30, 30)
LABEL_INK, LABEL_GROUND = (255, 255, 255), (230, 30, 30, 200)


def draw_words(data: bytes, words: Sequence[PageWord]) -> Image.Image:
    """The image of ``data`` (PNG or JPEG bytes) with every word's box outlined and its text written above it."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    size = max(10, min(image.size) // 60)
    font = ImageFont.load_default(size)
    for word in words:
        points = [tuple(map(float, corner)) for corner in word.corners]
        draw.polygon(points, outline=BOX + (255,), width=max(1, size // 6))
        left, top = min(x for x, _ in points), min(y for _, y in points)
        label = draw.textbbox((left, top), word.text, font=font, anchor="lb")
        draw.rectangle(label, fill=LABEL_GROUND)
        draw.text((left, top), word.text, font=font, fill=LABEL_INK, anchor="lb")
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")
