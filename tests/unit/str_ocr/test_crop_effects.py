"""The effects that make drawn lines look like a detector's crops: each keeps the text readable (ink stands out
from its ground) and changes what it says it changes."""

import random

import numpy as np
import pytest
from PIL import Image

from str_ocr import crop_effects
from str_ocr.fonts import font_files
from str_ocr.synth import _font


@pytest.fixture(scope="module")
def font():
    return _font(font_files("core")[0], 40)


def test_ink_stands_out_from_every_kind_of_ground():
    rng, noise = random.Random(1), np.random.default_rng(1)
    photo = Image.fromarray(np.random.default_rng(2).integers(0, 255, (300, 400, 3), dtype=np.uint8))
    for _ in range(200):
        ground = crop_effects.ground((120, 40), rng, noise, photo)
        ink = crop_effects.ink_colour(ground, rng)
        level = crop_effects.grey_of(ground.reshape(-1, 3).mean(axis=0))
        assert abs(float(crop_effects.grey_of(ink)) - float(level)) >= crop_effects.MIN_CONTRAST - 1


def test_tracking_spaces_the_letters_apart(font):
    tight = crop_effects.ink_mask("word", font, 0.0, 0)
    spaced = crop_effects.ink_mask("word", font, 12.0, 0)
    assert spaced.width >= tight.width + 3 * 12 - 4 and spaced.height <= tight.height + 4


def test_a_neighbour_is_cut_in_at_an_edge_only(font):
    rng = random.Random(3)
    for _ in range(20):
        canvas = crop_effects.with_margins(crop_effects.ink_mask("ab", font, 0.0, 0), 40, rng)
        before = np.asarray(canvas).copy()
        crop_effects.cut_in_neighbour(canvas, font, "neighbouring", rng)
        added = (np.asarray(canvas) > 0) & (before == 0)
        rows, cols = np.nonzero(added)
        band_y, band_x = 0.4 * canvas.height, 0.15 * canvas.width
        assert rows.size == 0 or rows.max() < band_y or rows.min() >= canvas.height - band_y \
            or cols.max() < band_x or cols.min() >= canvas.width - band_x


@pytest.mark.parametrize("effect", ["perspective", "curve", "motion_blur", "low_resolution"])
def test_the_geometric_and_optical_effects_keep_the_crop_size(effect):
    rng = random.Random(4)
    image = np.zeros((48, 160, 3), np.uint8)
    image[16:32, 20:140] = 255
    apply = getattr(crop_effects, effect)
    changed = apply(image, rng, (0.0, 0.0, 0.0)) if effect == "perspective" else apply(image, rng)
    assert changed.shape == image.shape and changed.dtype == np.uint8
    assert (changed != image).any()


def test_a_shadow_darkens_and_never_lightens():
    rng = random.Random(5)
    ground = np.full((40, 200, 3), 200, np.float32)
    shaded = crop_effects.shadow(ground, rng)
    assert (shaded <= ground + 1e-3).all() and shaded.min() < 0.8 * 200


def test_a_crop_is_a_grey_image_with_its_ground_level(font):
    rng, noise = random.Random(6), np.random.default_rng(6)
    photo = Image.new("RGB", (200, 200), (90, 140, 60))
    near = 0
    for _ in range(20):
        image, edge = crop_effects.draw_crop("Sample", font, 0, "other", photo, rng, noise)
        pixels = np.asarray(image)
        assert image.mode == "L" and image.height >= 20
        near += abs(float(np.median(np.concatenate([pixels[0], pixels[-1]]))) - edge) < 25
    assert near >= 16  # the ground's level, but where a neighbour, a rule or a shadow covers an edge
