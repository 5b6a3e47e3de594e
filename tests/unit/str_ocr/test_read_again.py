"""Reading unsure lines again at other stretches, without a network: a reader that says what width it saw."""

import numpy as np
import pytest

from str_ocr.contract import MAX_WIDTH, MIN_WIDTH
from str_ocr.read_again import restretched, read_again_where_unsure
from str_ocr.text import Reading


def line(width: int, grey: int = 128) -> np.ndarray:
    return np.full((32, width), grey, dtype=np.uint8)


@pytest.mark.parametrize(("width", "stretch", "expected"), [(120, 1.0, 100), (120, 1.44, 144), (120, 1.2, 120),
                                                             (3, 1.0, MIN_WIDTH), (MAX_WIDTH, 1.44, MAX_WIDTH)])
def test_a_line_is_resampled_to_the_width_of_its_new_stretch_within_the_served_widths(width, stretch, expected):
    resampled = restretched(line(width), stretch, served=1.2)
    assert resampled.shape == (32, expected) and resampled.dtype == np.uint8


def test_resampling_keeps_what_the_line_shows():
    striped = np.tile(np.repeat(np.array([0, 255], dtype=np.uint8), 12), (32, 5))  # 120 wide: 5 dark, 5 light bars
    narrower = restretched(striped, 1.0, served=1.2)
    assert narrower[:, 2].max() < 64 and narrower[:, 15].min() > 192  # the first bar dark, the second light


class WidthReader:
    """Reads a line as its width; the confidence is ``confidence[width]`` (default 0.5); keeps each call's widths."""

    def __init__(self, confidence: dict[int, float]) -> None:
        self.confidence, self.calls = confidence, []

    def __call__(self, lines: list[np.ndarray]) -> list[Reading]:
        self.calls.append([x.shape[1] for x in lines])
        return [Reading(str(x.shape[1]), self.confidence.get(x.shape[1], 0.5)) for x in lines]


def test_only_unsure_lines_are_read_again_and_the_most_confident_reading_is_kept():
    reader = WidthReader({120: 0.95, 60: 0.4, 50: 0.3, 72: 0.9, 240: 0.6, 200: 0.7, 288: 0.2})
    readings, read_again = read_again_where_unsure([line(120), line(60), line(240)], reader, below=0.8)
    assert reader.calls == [[120, 60, 240], [50, 200], [72, 288]]  # once each, then the unsure at 1.0 and at 1.44
    assert [r.text for r in readings] == ["120", "72", "200"] and read_again == 2


def test_a_line_read_again_no_more_confidently_keeps_its_first_reading():
    reader = WidthReader({60: 0.5, 50: 0.5, 72: 0.5})
    readings, read_again = read_again_where_unsure([line(60)], reader, below=0.8)
    assert [r.text for r in readings] == ["60"] and read_again == 1


def test_sure_lines_are_read_once():
    reader = WidthReader({120: 0.9, 60: 0.85})
    readings, read_again = read_again_where_unsure([line(120), line(60)], reader, below=0.8)
    assert reader.calls == [[120, 60]] and read_again == 0 and [r.text for r in readings] == ["120", "60"]


def test_a_line_is_not_read_again_at_the_stretch_it_was_served_at():
    reader = WidthReader({})
    readings, read_again = read_again_where_unsure([line(100)], reader, below=0.8, stretches=(1.0, 1.44), served=1.0)
    assert reader.calls == [[100], [144]] and read_again == 1
    reader = WidthReader({})
    assert read_again_where_unsure([line(100)], reader, below=0.8, stretches=(1.0,), served=1.0)[1] == 0
    assert reader.calls == [[100]]
