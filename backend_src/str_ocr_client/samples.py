"""Images for a client to send: text lines generated with their true text, or the image files of a folder."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


@dataclass(frozen=True)
class Item:
    """One encoded image file, and the text it says where that is known."""

    name: str
    data: bytes
    truth: str | None


def truth_from_name(path: Path) -> str | None:
    """``0007_hello.png`` -> ``hello``: the text after the last underscore, when it is alphanumeric."""
    _, sep, tail = path.stem.rpartition("_")
    return tail.lower() if sep and tail.isalnum() else None


def images_from_folder(folder: Path) -> list[Item]:
    """Every image file of ``folder``, by name."""
    paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise SystemExit(f"no images ({', '.join(sorted(IMAGE_SUFFIXES))}) in {folder}")
    return [Item(p.name, p.read_bytes(), truth_from_name(p)) for p in paths]


def generated_images(count: int, seed: int, image_format: str = "png") -> list[Item]:
    """Text lines drawn by ``str_ocr.synth`` (variable width, 1 to 25 characters), encoded as files."""
    from PIL import Image  # noqa: PLC0415 - only generated images need Pillow and the synthesiser

    from str_ocr.contract import UNSTRETCHED  # noqa: PLC0415
    from str_ocr.synth import TextLineSynth  # noqa: PLC0415

    synth = TextLineSynth(seed, line_stretch=UNSTRETCHED)  # ocr_preprocess stretches them
    items = []
    for i in range(count):
        sample = synth.sample()
        buffer = io.BytesIO()
        Image.fromarray(sample.image).convert("RGB").save(buffer, image_format.upper())
        items.append(Item(f"line{i:04d}.{image_format.lower()}", buffer.getvalue(), sample.text))
    return items
