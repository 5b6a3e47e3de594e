"""What the crops a text detector hands over look like and plainly drawn lines do not: uneven margins with a
little of the neighbouring text or a border cut in, coloured or photographed grounds, shadows, slight
perspective and curvature, motion blur, small text upscaled, letters spaced apart.

``synth.TextLineSynth`` draws a share of its lines through ``draw_crop`` (``Variety.crops``). Each step
takes the synthesiser's ``random.Random`` and NumPy generator, so the same seed draws the same crops.
"""

from __future__ import annotations

import random

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

MIN_CONTRAST = 70
"""Least grey-level difference between ink and the ground's mean, once converted to grey as served lines are."""
MIN_LOCAL_CONTRAST = 30
"""Least difference between ink and the ground's 5th (or 95th) percentile: no stretch of a gradient or photograph
as dark (or light) as the ink."""


def ink_mask(text: str, font: ImageFont.FreeTypeFont, tracking: float, stroke: int) -> Image.Image:
    """``text``'s ink (mode L, 255 where drawn), tight around it; ``tracking`` pixels added after each letter."""
    if tracking == 0:
        left, top, right, bottom = font.getbbox(text, stroke_width=stroke)
        mask = Image.new("L", (right - left, bottom - top))
        ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
        return mask
    advances = [font.getlength(c) + tracking for c in text]
    ascent, descent = font.getmetrics()
    pad = font.size + stroke  # room for glyphs that reach past the font's metrics (italics, swashes)
    mask = Image.new("L", (int(sum(advances)) + 3 * pad, ascent + descent + 2 * pad))
    draw, x = ImageDraw.Draw(mask), float(pad)
    for character, advance in zip(text, advances):
        draw.text((x, pad), character, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
        x += advance
    return mask.crop(mask.getbbox() or (0, 0, 1, 1))


def with_margins(mask: Image.Image, size: int, rng: random.Random) -> Image.Image:
    """The mask on a larger canvas: margins of 0 to 0.6 of the type size at the sides, 0 to 0.35 above
    and below, each side drawn on its own."""
    left, right = (int(rng.uniform(0.0, 0.6) * size) for _ in range(2))
    top, bottom = (int(rng.uniform(0.0, 0.35) * size) for _ in range(2))
    canvas = Image.new("L", (mask.width + left + right, mask.height + top + bottom))
    canvas.paste(mask, (left, top))
    return canvas


def cut_in_neighbour(canvas: Image.Image, font: ImageFont.FreeTypeFont, text: str, rng: random.Random) -> None:
    """Draw onto ``canvas`` the edge of what lay beside the line: a few rows of another line's letters above
    or below, or a rule (a table's or a sign's border) along one side."""
    draw = ImageDraw.Draw(canvas)
    if rng.random() < 0.6:
        left, top, right, bottom = font.getbbox(text)
        showing = int((bottom - top) * rng.uniform(0.08, 0.25))
        x = rng.randint(-(right - left) // 2, canvas.width // 2) - left
        y = canvas.height - showing - top if rng.random() < 0.5 else showing - bottom
        draw.text((x, y), text, font=font, fill=255)
        return
    thickness = rng.randint(1, max(1, canvas.height // 12))
    side = rng.choice(["top", "bottom", "left", "right"])
    width, height = canvas.size
    spans = {"top": (0, 0, width, thickness), "bottom": (0, height - thickness, width, height),
             "left": (0, 0, thickness, height), "right": (width - thickness, 0, width, height)}
    draw.rectangle(spans[side], fill=255)


def ground(size: tuple[int, int], rng: random.Random, noise: np.random.Generator, photo: Image.Image) -> np.ndarray:
    """An RGB ground ``[H, W, 3]`` float32: a flat colour, a gradient, fine texture, or a part of ``photo``
    with its contrast lowered so that text stays the strongest edge."""
    width, height = size
    kind = rng.random()
    base = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
    if kind < 0.35:
        return np.broadcast_to(base, (height, width, 3)).copy()
    if kind < 0.55:
        other = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
        across = rng.random() < 0.7
        ramp = np.linspace(0, 1, width if across else height, dtype=np.float32)
        ramp = ramp[np.newaxis, :, np.newaxis] if across else ramp[:, np.newaxis, np.newaxis]
        return base + (other - base) * np.broadcast_to(ramp, (height, width, 1)) * rng.uniform(0.3, 1.0)
    if kind < 0.7:
        grain = cv2.GaussianBlur(noise.normal(0, 1, (height, width)).astype(np.float32), (0, 0), rng.uniform(0.5, 3))
        return base + grain[:, :, np.newaxis] / (grain.std() + 1e-6) * rng.uniform(5, 25)
    scale = rng.uniform(0.3, 1.5)
    crop_w, crop_h = min(photo.width, int(width / scale) + 1), min(photo.height, int(height / scale) + 1)
    x, y = rng.randint(0, photo.width - crop_w), rng.randint(0, photo.height - crop_h)
    part = np.asarray(photo.crop((x, y, x + crop_w, y + crop_h)).resize(size), np.float32)
    mean = part.mean(axis=(0, 1))
    return mean + (part - mean) * rng.uniform(0.2, 0.6)


def grey_of(rgb: np.ndarray) -> np.ndarray:
    """Pillow's RGB-to-L weights, as served colour images are converted."""
    return rgb @ np.array([0.299, 0.587, 0.114], np.float32)


def ink_colour(ground_rgb: np.ndarray, rng: random.Random) -> np.ndarray:
    """A colour at least ``MIN_CONTRAST`` grey levels from the ground's mean: mostly darker on light grounds
    and lighter on dark ones, sometimes the other way where the ground leaves room."""
    greys = grey_of(ground_rgb.reshape(-1, 3))
    level, darkest, lightest = float(greys.mean()), float(np.percentile(greys, 5)), float(np.percentile(greys, 95))
    room_below, room_above = level >= MIN_CONTRAST, level <= 255 - MIN_CONTRAST
    darker = rng.random() < (0.8 if level >= 128 else 0.2) if room_below and room_above else room_below
    for _ in range(20):
        colour = np.array([rng.randint(0, 255) for _ in range(3)], np.float32)
        shade = float(grey_of(colour))
        if darker and level - shade >= MIN_CONTRAST and darkest - shade >= MIN_LOCAL_CONTRAST:
            return colour
        if not darker and shade - level >= MIN_CONTRAST and shade - lightest >= MIN_LOCAL_CONTRAST:
            return colour
    return np.zeros(3, np.float32) if darker else np.full(3, 255, np.float32)


def shadow(rgb: np.ndarray, rng: random.Random) -> np.ndarray:
    """A soft-edged shadow over one side of the line: a half-plane darkened by 25 to 60 %."""
    height, width = rgb.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    distance = (xs - rng.uniform(0, width)) * np.cos(angle) + (ys - rng.uniform(0, height)) * np.sin(angle)
    edge = 1 / (1 + np.exp(-distance / max(1.0, rng.uniform(0.02, 0.2) * width)))
    return rgb * (1 - rng.uniform(0.25, 0.6) * edge)[:, :, np.newaxis]


def perspective(image: np.ndarray, rng: random.Random, fill: tuple[float, ...]) -> np.ndarray:
    """The line seen slightly from one side: each corner moved by up to 8 % of the height and 4 % of the width."""
    height, width = image.shape[:2]
    corners = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    moved = corners + np.float32([[rng.uniform(-0.04, 0.04) * width, rng.uniform(-0.08, 0.08) * height]
                                  for _ in range(4)])
    matrix = cv2.getPerspectiveTransform(corners, moved)
    return cv2.warpPerspective(image, matrix, (width, height), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=fill)


def room_to_move(image: np.ndarray) -> np.ndarray:
    """The crop with its edges repeated outwards, so that perspective and curvature move no letter out of it."""
    height, width = image.shape[:2]
    rows, cols = int(0.16 * height) + 1, int(0.05 * width) + 1
    return cv2.copyMakeBorder(image, rows, rows, cols, cols, cv2.BORDER_REPLICATE)


def curve(image: np.ndarray, rng: random.Random) -> np.ndarray:
    """The line bent along an arc (a label on a bottle, a page's curl): rows shifted by up to 15 % of the height."""
    height, width = image.shape[:2]
    xs = np.linspace(-1, 1, width, dtype=np.float32)
    shift = rng.uniform(-0.15, 0.15) * height * (xs**2 if rng.random() < 0.6 else np.sin(np.pi * xs))
    map_x, map_y = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    return cv2.remap(image, map_x, map_y + shift[np.newaxis, :], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def motion_blur(image: np.ndarray, rng: random.Random) -> np.ndarray:
    """A camera's shake: a line kernel 3 to 9 pixels long at any angle."""
    length = rng.randint(3, 9)
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(image, -1, kernel / max(kernel.sum(), 1e-6))


def low_resolution(image: np.ndarray, rng: random.Random) -> np.ndarray:
    """Small text enlarged: the line shrunk to 8 to 20 pixels high and scaled back up."""
    height, width = image.shape[:2]
    small = rng.randint(8, 20)
    if height <= small:
        return image
    factor = small / height
    shrunk = cv2.resize(image, (max(1, round(width * factor)), small), interpolation=cv2.INTER_AREA)
    return cv2.resize(shrunk, (width, height), interpolation=rng.choice([cv2.INTER_LINEAR, cv2.INTER_CUBIC]))


def draw_crop(text: str, font: ImageFont.FreeTypeFont, stroke: int, neighbour: str, photo: Image.Image,
              rng: random.Random, noise: np.random.Generator) -> tuple[Image.Image, int]:
    """``text`` drawn as a detector's crop of it: the image (mode L) and its ground's grey level at the edges."""
    tracking = rng.uniform(-0.04, 0.35) * font.size if rng.random() < 0.3 else 0.0
    mask = with_margins(ink_mask(text, font, tracking, stroke), font.size, rng)
    if rng.random() < 0.35:
        cut_in_neighbour(mask, font, neighbour, rng)
    rgb = ground(mask.size, rng, noise, photo)
    alpha = np.asarray(mask, np.float32)[:, :, np.newaxis] / 255
    rgb = rgb * (1 - alpha) + ink_colour(rgb, rng) * alpha
    if rng.random() < 0.25:
        rgb = shadow(rgb, rng)
    rgb = np.clip(rgb, 0, 255).astype(np.uint8)
    edge = tuple(float(v) for v in np.median(np.concatenate([rgb[0], rgb[-1]]), axis=0))
    warped, bent = rng.random() < 0.3, rng.random() < 0.2
    if warped or bent:
        rgb = room_to_move(rgb)
    if warped:
        rgb = perspective(rgb, rng, edge)
    if bent:
        rgb = curve(rgb, rng)
    if rng.random() < 0.2:
        rgb = motion_blur(rgb, rng)
    if rng.random() < 0.2:
        rgb = low_resolution(rgb, rng)
    image = Image.fromarray(rgb).convert("L")
    if rng.random() < 0.15:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    return image, round(float(grey_of(np.float32(edge))))
