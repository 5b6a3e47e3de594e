import cv2
import numpy as np
import pytest

from str_ocr.detection import (STRIDE, Boxes, DetectorSession, DetectorSettings, check_detector_input, detector_input,
                               detector_path, find_boxes, input_size, reading_order)
from str_ocr.errors import InputError


def probability_map(height, width, rectangles):
    """A map with 0.9 inside each rotated rectangle ``((cx, cy), (w, h), degrees)``."""
    probability = np.full((height, width), 0.02, np.float32)
    for rectangle in rectangles:
        cv2.fillPoly(probability, [np.round(cv2.boxPoints(rectangle)).astype(np.int32)], 0.9)
    return probability


def iou(a, b):
    """Intersection over union of two convex quadrilaterals [4, 2]."""
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return area / (cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - area)


@pytest.mark.parametrize(("height", "width", "expected"), [
    (720, 960, (736, 992)),      # the shorter side up to 736, both to multiples of 32
    (2000, 3000, (1344, 1984)),  # the longer side capped at 2000 wins
    (1, 100_000, (32, 1984)),    # a sliver stays within bounds
    (32, 32, (736, 736)),
])
def test_the_detector_input_size_follows_the_short_and_long_side_rules(height, width, expected):
    size = input_size(height, width)
    assert size == expected
    assert all(side % STRIDE == 0 for side in size)


def test_detector_input_is_bgr_scaled_to_plus_minus_one_with_the_scale_back():
    rgb = np.zeros((100, 200, 3), np.uint8)
    rgb[..., 0] = 255  # pure red
    pixels, scale = detector_input(rgb)
    assert pixels.shape == (1, 3, 736, 1472) and pixels.dtype == np.float32
    assert pixels[0, 2].min() == 1.0 and pixels[0, 0].max() == -1.0  # red is the last channel of BGR
    np.testing.assert_allclose(scale, [200 / 1472, 100 / 736])


def test_a_rectangle_of_text_becomes_one_box_grown_back_by_the_unclip_ratio():
    probability = probability_map(200, 300, [((150, 100), (120, 20), 0)])
    boxes = find_boxes(probability, np.ones(2, np.float32), (200, 300))
    assert len(boxes) == 1 and 0.8 < boxes.scores[0] <= 0.9  # the mean over the region, its rim included
    core_w, core_h = 121 + 1, 21 + 1  # the filled rectangle, dilated by the 2x2 kernel
    grow = 1.6 * core_w * core_h / (2 * (core_w + core_h))
    width, height = np.ptp(boxes.corners[0, :, 0]), np.ptp(boxes.corners[0, :, 1])
    assert width == pytest.approx(core_w + 2 * grow, abs=1) and height == pytest.approx(core_h + 2 * grow, abs=1)
    assert boxes.corners[0, 0, 0] < boxes.corners[0, 1, 0] and boxes.corners[0, 0, 1] < boxes.corners[0, 3, 1]


@pytest.mark.parametrize("degrees", [-4, -1, 2, 4])
def test_a_turned_rectangle_gives_a_box_turned_the_same_way(degrees):
    probability = probability_map(300, 400, [((200, 150), (200, 24), degrees)])
    (corners,) = find_boxes(probability, np.ones(2, np.float32), (300, 400)).corners
    top = corners[1] - corners[0]
    assert np.degrees(np.arctan2(top[1], top[0])) == pytest.approx(degrees, abs=0.75)


def test_boxes_are_scaled_back_to_the_image_and_clipped_to_it():
    probability = probability_map(100, 100, [((50, 50), (60, 10), 0), ((95, 10), (30, 8), 0)])
    boxes = find_boxes(probability, np.array([2.0, 3.0], np.float32), (300, 200))
    assert len(boxes) == 2
    assert boxes.corners[..., 0].max() <= 200 and boxes.corners[..., 1].max() <= 300
    centre = boxes.corners[np.argmin(boxes.corners[:, :, 0].min(axis=1))].mean(axis=0)
    np.testing.assert_allclose(centre, [100, 150], atol=3)


def test_faint_regions_and_specks_are_not_boxes():
    probability = probability_map(100, 200, [((50, 50), (60, 12), 0)])
    probability[20:30, 120:180] = 0.4  # above the pixel threshold, below the box threshold
    probability[80, 150] = 0.9  # a speck
    assert len(find_boxes(probability, np.ones(2, np.float32), (100, 200))) == 1
    assert len(find_boxes(np.zeros((64, 64), np.float32), np.ones(2, np.float32), (64, 64))) == 0


def test_many_regions_are_found_at_once():
    rectangles = [((20 + 40 * (i % 20), 15 + 30 * (i // 20)), (30, 10), 0) for i in range(300)]
    boxes = find_boxes(probability_map(480, 820, rectangles), np.ones(2, np.float32), (480, 820))
    assert len(boxes) == 300


def test_reading_order_is_lines_top_to_bottom_each_left_to_right():
    def box(x, y, height=20):
        return np.array([[x, y], [x + 50, y], [x + 50, y + height], [x, y + height]], np.float32)

    corners = np.stack([box(300, 104), box(10, 100), box(10, 200), box(150, 96), box(400, 205, 30)])
    assert reading_order(corners).tolist() == [1, 3, 0, 2, 4]
    assert reading_order(np.zeros((0, 4, 2), np.float32)).tolist() == []


@pytest.mark.parametrize(("pixels", "says"), [
    (np.zeros((1, 3, 64, 64), np.float64), "FP32"),
    (np.zeros((3, 64, 64), np.float32), "FP32 \\[1, 3"),
    (np.zeros((1, 1, 64, 64), np.float32), "FP32 \\[1, 3"),
    (np.zeros((1, 3, 64, 70), np.float32), "multiples of 32"),
    (np.zeros((1, 3, 64, 4096), np.float32), "up to 2048"),
    (np.full((1, 3, 64, 64), np.nan, np.float32), "finite"),
    (np.full((1, 3, 64, 64), 7, np.float32), "\\[-1, 1\\]"),
])
def test_the_detector_refuses_what_detector_input_would_never_make(pixels, says):
    with pytest.raises(InputError, match=says):
        check_detector_input(pixels, 2048)


def test_the_pinned_detector_finds_printed_words():
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (640, 240), (240, 236, 228))
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
    ImageDraw.Draw(image).text((40, 40), "triton", font=font, fill=(20, 20, 20))
    ImageDraw.Draw(image).text((360, 150), "serving", font=font, fill=(20, 20, 90))
    rgb = np.asarray(image)
    pixels, scale = detector_input(rgb)
    boxes = find_boxes(DetectorSession(detector_path())(pixels)[0, 0], scale, rgb.shape[:2])
    assert len(boxes) == 2
    ordered = boxes.take(reading_order(boxes.corners))
    assert ordered.corners[0, 0, 0] < 60 and ordered.corners[1, 0, 0] > 340
    assert isinstance(ordered, Boxes) and (ordered.scores > DetectorSettings().box_threshold).all()


def test_reading_order_follows_the_slant_of_a_turned_page():
    angle = np.deg2rad(4)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    boxes = [np.array([[x, y], [x + 60, y], [x + 60, y + 20], [x, y + 20]], np.float32)
             for y in (100, 130) for x in range(0, 900, 80)]
    turned = np.stack([box @ rotation.T for box in boxes])  # 4 degrees: the line drops 63 px over its length
    assert reading_order(turned).tolist() == list(range(len(boxes)))


def test_a_region_is_scored_over_its_whole_rectangle():
    probability = np.full((100, 300), 0.02, np.float32)
    probability[40:60, 50:250] = 0.35
    probability[40:50, 50:150] = probability[50:60, 150:250] = 0.95  # two opposite quadrants: the mean is 0.65
    (score,) = find_boxes(probability, np.ones(2, np.float32), (100, 300)).scores
    assert score == pytest.approx(0.65, abs=0.04)


def test_a_map_of_noise_is_bounded_to_the_largest_candidates():
    from str_ocr.detection import MAX_CANDIDATES

    probability = np.zeros((800, 800), np.float32)
    probability[::4, ::4] = 0.9  # 40,000 specks
    probability[100:130, 100:400] = 0.9
    boxes = find_boxes(probability, np.ones(2, np.float32), (800, 800))
    assert len(boxes) <= MAX_CANDIDATES and len(boxes) >= 1
