"""Reading unsure lines again at other stretches, without a network: a reader that says what width it saw."""

import asyncio

import numpy as np
import pytest

from str_ocr.contract import MAX_WIDTH, MIN_WIDTH, NUM_CLASSES, READ_AGAIN_BELOW
from str_ocr.errors import InputError
from str_ocr.preprocess import LineLimits, normalize
from str_ocr.read_again import (grey_lines, kept_readings, most_agreed, most_confident, read_again_served,
                                read_again_stretches, read_again_threshold, read_again_where_unsure,
                                read_logits_again, rereading, restretched)
from str_ocr.settings import PostprocessSettings, postprocess_settings
from str_ocr.text import Reading, encode


def line(width: int, grey: int = 128) -> np.ndarray:
    return np.full((32, width), grey, dtype=np.uint8)


@pytest.mark.parametrize(("width", "stretch", "expected"), [(120, 1.0, 100), (120, 1.44, 144), (120, 1.2, 120),
                                                             (3, 1.0, MIN_WIDTH), (MAX_WIDTH, 1.44, MAX_WIDTH)])
def test_a_line_is_resampled_to_the_width_of_its_new_stretch_within_the_served_widths(width, stretch, expected):
    resampled = restretched(line(width), stretch, LineLimits(stretch=1.2))
    assert resampled.shape == (32, expected) and resampled.dtype == np.uint8


def test_resampling_keeps_what_the_line_shows():
    striped = np.tile(np.repeat(np.array([0, 255], dtype=np.uint8), 12), (32, 5))  # 120 wide: 5 dark, 5 light bars
    narrower = restretched(striped, 1.0, LineLimits(stretch=1.2))
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
    readings, read_again = read_again_where_unsure([line(120), line(60), line(240)], reader, below=0.8,
                                                   keep=most_confident)
    assert reader.calls == [[120, 60, 240], [50, 200, 72, 288]]  # once each, then the unsure at 1.0 and at 1.44
    assert [r.text for r in readings] == ["120", "72", "200"] and read_again == 2


def test_a_line_read_again_no_more_confidently_keeps_its_first_reading_where_the_most_confident_is_kept():
    reader = WidthReader({60: 0.5, 50: 0.5, 72: 0.5})
    readings, read_again = read_again_where_unsure([line(60)], reader, below=0.8, keep=most_confident)
    assert [r.text for r in readings] == ["60"] and read_again == 1
    agreed, _ = read_again_where_unsure([line(60)], reader, below=0.8, keep=most_agreed)
    assert agreed == [Reading("50", 0.5)]  # the first reading, found unsure, has no say


def test_sure_lines_are_read_once():
    reader = WidthReader({120: 0.9, 60: 0.85})
    readings, read_again = read_again_where_unsure([line(120), line(60)], reader, below=0.8)
    assert reader.calls == [[120, 60]] and read_again == 0 and [r.text for r in readings] == ["120", "60"]


def test_second_weights_read_the_unsure_lines_as_served_and_at_each_stretch_and_the_surest_reading_is_kept():
    reader = WidthReader({90: 0.95, 60: 0.4, 100: 0.4, 50: 0.3, 72: 0.7, 83: 0.6})
    second = WidthReader({60: 0.45, 100: 0.9, 50: 0.2, 72: 0.2, 83: 0.1})
    readings, read_again = read_again_where_unsure([line(90), line(60), line(100)], reader, below=0.8,
                                                   limits=LineLimits(max_width=100), second=second)
    # The sure line by neither; 100 wide, 1.44 times as wide is clamped to the width it has, so not read again.
    assert reader.calls == [[90, 60, 100], [50, 83, 72]] and second.calls == [[60, 100, 50, 83, 72]]
    assert [(r.text, r.confidence) for r in readings] == [("90", 0.95), ("72", 0.7), ("100", 0.9)]
    assert read_again == 2


def test_second_weights_alone_read_the_unsure_lines_again_where_the_first_weights_are_told_not_to():
    reader = WidthReader({90: 0.95, 60: 0.4, 50: 0.9, 72: 0.9})
    second = WidthReader({60: 0.45, 50: 0.2, 72: 0.3})
    readings, read_again = read_again_where_unsure([line(90), line(60)], reader, below=0.8, second=second,
                                                   first_weights_again=False)
    assert reader.calls == [[90, 60]] and second.calls == [[60, 50, 72]]
    assert readings == [Reading("90", 0.95), Reading("60", 0.45)] and read_again == 1


def test_without_second_weights_the_first_read_the_unsure_lines_again_whatever_they_are_told():
    reader = WidthReader({60: 0.4})
    _, read_again = read_again_where_unsure([line(60)], reader, below=0.8, first_weights_again=False)
    assert reader.calls == [[60], [50, 72]] and read_again == 1


def test_second_weights_read_an_unsure_line_that_no_stretch_changes():
    reader, second = WidthReader({100: 0.4}), WidthReader({100: 0.6})
    readings, read_again = read_again_where_unsure([line(100)], reader, below=0.8,
                                                   limits=LineLimits(min_width=100, max_width=100), second=second)
    assert reader.calls == [[100]] and second.calls == [[100]]
    assert readings[0].confidence == 0.6 and read_again == 1


def test_the_most_agreed_text_sums_the_confidences_of_the_readings_again_and_leaves_the_first_out():
    again = [Reading("bad", 0.4), Reading("bed", 0.7), Reading("bad", 0.35)]
    assert most_agreed(Reading("bed", 0.65), again) == Reading("bad", 0.4)  # 0.75 against 0.7, not 1.35
    assert most_confident(Reading("bed", 0.65), again) == Reading("bed", 0.7)


class TextReader(WidthReader):
    """Reads a line of each width as ``says[width]``, a text and its confidence."""

    def __init__(self, says: dict[int, tuple[str, float]]) -> None:
        super().__init__({})
        self.says = says

    def __call__(self, lines: list[np.ndarray]) -> list[Reading]:
        super().__call__(lines)
        return [Reading(*self.says[x.shape[1]]) for x in lines]


def test_an_unsure_line_keeps_the_text_both_weights_readings_again_agree_on_most_unless_told_otherwise():
    reader = TextReader({60: ("first", 0.4), 50: ("x", 0.3), 72: ("y", 0.9)})
    second = TextReader({60: ("x", 0.5), 50: ("x", 0.2), 72: ("z", 0.1)})
    agreed, read_again = read_again_where_unsure([line(60)], reader, below=0.8, second=second)
    confident, _ = read_again_where_unsure([line(60)], reader, below=0.8, second=second, keep=most_confident)
    assert agreed == [Reading("x", 0.5)] and read_again == 1 and confident == [Reading("y", 0.9)]


@pytest.mark.parametrize(("served", "width", "again"), [(1.2, 120, [100, 144]), (1.0, 100, [83, 120]),
                                                        (2.0, 200, [167, 240])])
def test_unsure_lines_are_read_again_a_step_narrower_and_wider_than_they_were_served(served, width, again):
    reader = WidthReader({})
    read_again_where_unsure([line(width)], reader, below=0.8, limits=LineLimits(stretch=served))
    assert reader.calls == [[width], again]
    assert read_again_stretches(served) == pytest.approx((served / 1.2, served * 1.2))


@pytest.mark.parametrize("below", [-0.1, 1.5, float("nan")])
def test_a_threshold_outside_0_to_1_is_refused_with_its_name(below):
    with pytest.raises(ValueError, match="--below must be a confidence from 0 .never. to 1"):
        read_again_threshold(below, "--below")


def test_a_rereading_refuses_readings_that_do_not_match_its_lines():
    plan = rereading([line(60)], [Reading("60", 0.5)], below=0.8)
    assert [x.shape[1] for x in plan.resampled] == [50, 72] and plan.of == [0, 0]
    with pytest.raises(ValueError, match="2 lines were to be read again; 1 readings came back"):
        kept_readings([Reading("60", 0.5)], [plan], [[Reading("50", 0.9)]], most_confident)


def test_lines_are_read_again_within_the_served_widths_and_not_where_they_would_be_as_wide_as_before():
    plan = rereading([line(1000)], [Reading("", 0.1)], below=0.8, limits=LineLimits(max_width=1100, stretch=1.2))
    assert [x.shape[1] for x in plan.resampled] == [833, 1100]
    widest = rereading([line(MAX_WIDTH), line(MIN_WIDTH)], [Reading("", 0.1)] * 2, below=0.8)
    assert [x.shape[1] for x in widest.resampled] == [1707, 5] and widest.of == [0, 1]  # 1.44x clamped; 1x clamped


def logits_of(text_steps: int, sure: bool, count: int = 1) -> np.ndarray:
    """``count`` lines' logits of ``text_steps`` time steps saying "a", surely or by a hair."""
    logits = np.zeros((count, text_steps, NUM_CLASSES), np.float32)
    logits[:, :, encode("a")[0]] = 10.0 if sure else 0.1
    return logits


def sent(width: int, count: int = 1) -> np.ndarray:
    return np.zeros((count, 1, 32, width), np.float32)


class ServedWidthReader(WidthReader):
    async def read(self, lines: list[np.ndarray]) -> list[Reading]:
        return self(lines)


class ServedTextReader(TextReader):
    async def read(self, lines: list[np.ndarray]) -> list[Reading]:
        return self(lines)


def test_the_postprocess_step_keeps_the_reading_it_is_told_to():
    reader = ServedTextReader({50: ("x", 0.3), 72: ("y", 0.9)})
    second = ServedTextReader({60: ("x", 0.5), 50: ("x", 0.2), 72: ("z", 0.1)})
    for keep, kept in [(most_agreed, Reading("x", 0.5)), (most_confident, Reading("y", 0.9))]:
        readings, read_again = asyncio.run(read_logits_again(logits_of(16, sure=False), sent(60), 513, 0.7,
                                                             LineLimits(), reader.read, second.read, keep))
        assert readings == [kept] and read_again == 1


def test_the_postprocess_step_reads_the_unsure_lines_it_is_given_again():
    reader = ServedWidthReader({50: 0.99})
    logits = np.concatenate([logits_of(16, sure=True), logits_of(16, sure=False), logits_of(16, sure=True)])
    readings, read_again = asyncio.run(read_logits_again(logits, sent(60, 3), 513, 0.7, LineLimits(), reader.read,
                                                         None, most_confident))
    assert reader.calls == [[50, 72]] and read_again == 1 and [r.text for r in readings] == ["a", "50", "a"]


def test_the_postprocess_step_keeps_the_first_readings_where_the_recogniser_cannot_read_again():
    async def unavailable(lines: list[np.ndarray]) -> None:
        return None

    readings, read_again = asyncio.run(read_logits_again(logits_of(16, sure=False), sent(60), 513, 0.7, LineLimits(),
                                                         unavailable, None, most_agreed))
    assert [r.text for r in readings] == ["a"] and read_again == 0


@pytest.mark.parametrize("sure", [True, False])
def test_the_postprocess_step_reads_logits_once_where_it_is_not_given_their_lines_or_is_sure(sure):
    reader = ServedWidthReader({})
    given = sent(60) if sure else None
    readings, read_again = asyncio.run(read_logits_again(logits_of(16, sure), given, 513, 0.7, LineLimits(),
                                                         reader.read, None, most_agreed))
    assert reader.calls == [] and read_again == 0 and [r.text for r in readings] == ["a"]


@pytest.mark.parametrize(("lines", "says"), [
    (np.zeros((1, 32, 60), np.float32), r"LINE must be \[1, 1, 32, W\], the lines of the 1 LOGITS; got \[1, 32, 60\]"),
    (sent(60, count=2), r"LINE must be \[1, 1, 32, W\].*got \[2, 1, 32, 60\]"),
    (np.zeros((1, 1, 16, 60), np.float32), r"got \[1, 1, 16, 60\]"),
    (sent(64), "LINE is 64 wide, which the recogniser reads in 17 time steps; LOGITS has 16"),
    (sent(2), "LINE is 2 wide; lines are 4 to 2048 wide"),
    (np.full((1, 1, 32, 60), np.nan, np.float32), "LINE contains NaN or infinite values"),
])
def test_lines_sent_beside_their_logits_are_checked_like_any_input(lines, says):
    with pytest.raises(InputError, match=says):
        grey_lines(lines, 16, 1, LineLimits())


def test_lines_sent_beside_their_logits_come_back_as_the_grey_lines_they_were_made_from():
    grey = np.random.default_rng(0).integers(0, 256, (32, 60), dtype=np.uint8)
    assert (grey_lines(normalize(grey)[np.newaxis, np.newaxis], 16, 1, LineLimits())[0] == grey).all()


def test_the_postprocess_steps_settings_come_from_its_config_and_bad_ones_say_what_to_change():
    settings = postprocess_settings({"read_again_below": "0.5", "line_stretch": "1.0", "max_width": "1000"})
    assert settings.read_again_below == 0.5 and settings.lines == LineLimits(max_width=1000, stretch=1.0)
    assert postprocess_settings({}) == PostprocessSettings(LineLimits(), READ_AGAIN_BELOW, 32)
    assert postprocess_settings({}).read_again_keeps == "most_agreed"
    assert postprocess_settings({"read_again_keeps": " Most_Confident "}).read_again_keeps == "most_confident"
    with pytest.raises(ValueError, match="'read_again_keeps' must be one of most_agreed, most_confident, got 'best'"):
        postprocess_settings({"read_again_keeps": "best"})
    with pytest.raises(ValueError, match="'max_requests_in_flight' must be at least 1"):
        postprocess_settings({"max_requests_in_flight": "0"})
    with pytest.raises(ValueError, match="'read_again_below' must be a confidence from 0 .never. to 1, got '2'"):
        postprocess_settings({"read_again_below": "2"})


def test_the_postprocess_step_has_second_weights_read_the_unsure_lines_and_keeps_what_either_reads_where_one_cannot():
    reader, second = ServedWidthReader({50: 0.8}), ServedWidthReader({60: 0.9, 72: 0.95})
    logits = np.concatenate([logits_of(16, sure=True), logits_of(16, sure=False)])
    readings, read_again = asyncio.run(read_logits_again(logits, sent(60, 2), 513, 0.7, LineLimits(), reader.read,
                                                         second.read, most_confident))
    assert reader.calls == [[50, 72]] and second.calls == [[60, 50, 72]] and read_again == 1
    assert [(r.text, r.confidence) for r in readings][1] == ("72", 0.95) and readings[0].text == "a"

    async def unavailable(lines: list[np.ndarray]) -> None:
        return None

    for first, other, kept, count in [(reader.read, unavailable, "50", 1), (unavailable, second.read, "72", 1),
                                      (unavailable, unavailable, "a", 0)]:
        readings, read_again = asyncio.run(read_logits_again(logits, sent(60, 2), 513, 0.7, LineLimits(), first,
                                                             other, most_confident))
        assert readings[1].text == kept and read_again == count


def test_a_reader_that_fails_fails_the_reading_once_the_other_is_done():
    second = ServedWidthReader({})
    finished = []

    async def failing(lines: list[np.ndarray]) -> None:
        raise RuntimeError("queue full")

    async def slow(lines: list[np.ndarray]) -> list[Reading]:
        await asyncio.sleep(0.05)
        finished.append(len(lines))
        return second(lines)

    with pytest.raises(RuntimeError, match="queue full"):
        asyncio.run(read_again_served([line(60)], [Reading("a", 0.1)], 0.7, LineLimits(), failing, slow,
                                      most_agreed))
    assert finished == [3]  # the second weights' three readings were awaited, not left running


def test_postprocess_settings_name_a_second_recogniser_only_with_lines_read_again():
    assert postprocess_settings({}).second_recognizer == ""
    assert postprocess_settings({"second_recognizer": "other"}).second_recognizer == "other"
    with pytest.raises(ValueError, match="'read_again_below' is 0: set it above 0, or leave 'second_recognizer' empty"):
        postprocess_settings({"second_recognizer": "other", "read_again_below": "0"})
