import numpy as np
from PIL import Image

from str_ocr import INPUT_HEIGHT, denormalize, normalize
from str_ocr.preprocess import LINE_STRETCH, line_input, scaled_width


def test_normalisation_maps_grey_levels_to_minus_one_one():
    values = normalize(np.array([0, 127.5, 255], dtype=np.float64))
    assert values.dtype == np.float32
    np.testing.assert_allclose(values, [-1, 0, 1])
    np.testing.assert_array_equal(denormalize(normalize(np.arange(256))), np.arange(256))


def test_line_input_keeps_the_aspect_ratio_or_takes_a_fixed_width():
    line = Image.new("L", (300, 64), 200)
    assert line_input(line, stretch=1.0).shape == (1, INPUT_HEIGHT, 150)
    assert line_input(line).shape == (1, INPUT_HEIGHT, round(150 * LINE_STRETCH))
    assert line_input(line, width=100).shape == (1, INPUT_HEIGHT, 100)
    assert line_input(line, max_width=120).shape == (1, INPUT_HEIGHT, 120)
    np.testing.assert_allclose(line_input(line, stretch=1.0), normalize(np.full((1, 32, 150), 200)))


def test_scaled_width_never_falls_below_the_minimum():
    assert scaled_width(1, 500, min_width=4) == 4
    assert scaled_width(64, 32, stretch=1.0) == 64


def test_a_stretch_widens_a_line_within_its_limits_and_leaves_a_given_width_alone():
    assert scaled_width(300, 64, stretch=1.2) == 180
    assert scaled_width(300, 64, max_width=170, stretch=1.2) == 170
    assert scaled_width(2, 64, min_width=4, stretch=1.2) == 4
    line = Image.new("L", (300, 64), 200)
    assert line_input(line, stretch=1.2).shape == (1, INPUT_HEIGHT, 180)
    assert line_input(line, width=100, stretch=1.2).shape == (1, INPUT_HEIGHT, 100)
