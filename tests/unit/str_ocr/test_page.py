import asyncio
import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from str_ocr.contract import LINE_STRETCH, output_length
from str_ocr.detection import Boxes
from str_ocr.errors import Cancelled, InputError
from str_ocr.images import ImageLimits
from str_ocr.page import (RECOGNIZER_STEP, SECOND_RECOGNIZER_STEP, PageSettings, cut_words, decode_page, ink_of,
                          padded_batch, read_page, recognise, strongest, upright, word_spans)
from str_ocr.preprocess import LineLimits
from str_ocr import page
from str_ocr.read_again import most_agreed, most_confident, read_again_stretches, restretched
from str_ocr.settings import line_limits, page_settings

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def line_image(text, size=24, height=32, ink=20, ground=235):
    font = ImageFont.truetype(FONT, size)
    width = int(font.getlength(text)) + 16
    image = Image.new("L", (width, height), ground)
    ImageDraw.Draw(image).text((8, height / 2), text, font=font, fill=ink, anchor="lm")
    return np.asarray(image)


def png(image):
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize(("ink", "ground"), [(20, 235), (235, 20)])
def test_a_line_is_cut_into_its_words_at_the_spaces_in_either_polarity(ink, ground):
    spans = word_spans(ink_of(line_image("big red fox", ink=ink, ground=ground)), word_gap=0.15)
    assert len(spans) == 3
    assert [start for start, _ in spans] == sorted(start for start, _ in spans)  # left to right
    assert all(stop - start > 10 for start, stop in spans)


def test_the_gaps_between_letters_do_not_cut_a_word():
    assert len(word_spans(ink_of(line_image("minimum")), word_gap=0.15)) == 1
    assert word_spans(np.full((32, 50), 200, np.uint8), 0.3) == [(0, 50)]  # no ink: the whole line


def test_upright_warps_a_turned_box_back_to_a_rectangle():
    grey = np.zeros((100, 100), np.uint8)
    grey[40:60, 20:80] = 255
    corners = np.array([[20, 40], [80, 40], [80, 60], [20, 60]], np.float32)
    crop = upright(grey, corners)
    assert crop.shape == (20, 60) and crop.mean() > 250


def test_cut_words_gives_each_word_its_box_along_the_line():
    line = line_image("big red fox", size=48, height=64)
    grey = np.full((200, 400), 235, np.uint8)
    grey[50:114, 20:20 + line.shape[1]] = line
    corners = np.array([[[20, 50], [20 + line.shape[1], 50], [20 + line.shape[1], 114], [20, 114]]], np.float32)
    words = cut_words(grey, Boxes(corners, np.ones(1, np.float32)), word_gap=0.15)
    assert len(words) == 3
    assert all(word.line.shape[:2] == (1, 32) and word.line.dtype == np.float32 for word in words)
    lefts = [word.corners[0, 0] for word in words]
    assert lefts == sorted(lefts) and lefts[0] >= 20 and words[-1].corners[1, 0] <= 20 + line.shape[1]


@pytest.mark.parametrize("stretch", [1.0, 1.2, 1.5])
def test_a_line_is_cut_at_the_same_gaps_however_wide_it_is_scaled(stretch):
    # In a box 80 high: letters 12 wide, 2 apart; words 11 apart (0.14 of the height) and 24 apart (0.3). A word gap
    # of 0.15 of the height cuts at the second only, whatever the stretch the line is read at.
    grey = np.full((100, 200), 235, np.uint8)
    left = 10
    for gap_after in [2, 2, 11, 2, 2, 24, 2, 2, 0]:
        grey[18:82, left:left + 12] = 20
        left += 12 + gap_after
    corners = np.array([[[5, 10], [left + 5, 10], [left + 5, 90], [5, 90]]], np.float32)
    words = cut_words(grey, Boxes(corners, np.ones(1, np.float32)), word_gap=0.15, limits=LineLimits(stretch=stretch))
    assert len(words) == 2
    assert words[1].corners[0, 0] == pytest.approx(10 + 40 + 11 + 40 + 24, abs=2)  # where the third word starts
    inked_columns = (words[1].line[0] < 0.5).any(axis=0).sum()  # its 40 columns, scaled to 32 rows of 80, stretched
    assert inked_columns == pytest.approx(40 * 0.4 * stretch, abs=1.5)


def test_strongest_drops_the_least_certain_boxes_and_keeps_the_order():
    corners = np.arange(5 * 8, dtype=np.float32).reshape(5, 4, 2)
    kept, dropped = strongest(Boxes(corners, np.array([0.9, 0.5, 0.8, 0.6, 0.95], np.float32)), 3)
    assert dropped == 2 and kept.scores.tolist() == pytest.approx([0.9, 0.8, 0.95])
    assert strongest(Boxes(corners, np.ones(5, np.float32)), 10)[1] == 0


def test_a_padded_batch_repeats_each_lines_last_column():
    short, long = np.full((1, 32, 4), 0.5, np.float32), np.zeros((1, 32, 9), np.float32)
    batch = padded_batch([short, long])
    assert batch.shape == (2, 1, 32, 9) and (batch[0] == 0.5).all()


@pytest.mark.parametrize("data", [b"", b"not an image", png(Image.new("RGB", (5000, 5000)))[:2000]])
def test_a_page_that_cannot_be_read_is_the_callers_error(data):
    with pytest.raises(InputError):
        decode_page(data, ImageLimits(max_pixels=16_000_000))


def test_a_page_over_the_pixel_limit_is_refused_before_decoding():
    with pytest.raises(InputError, match="pixels"):
        decode_page(png(Image.new("L", (5000, 4000))), ImageLimits(max_pixels=16_000_000))


def test_a_transparent_page_is_read_over_white():
    page = decode_page(png(Image.new("RGBA", (10, 8), (0, 0, 0, 0))), ImageLimits())
    assert page.rgb.shape == (8, 10, 3) and (page.rgb == 255).all() and page.size == (8, 10)


class Recorder:
    """An ``infer`` that answers the detector with a map of one line of three words, and records the recogniser's
    requests, answering each line with logits of its own length."""

    def __init__(self, probability):
        self.probability, self.requests = probability, []

    async def __call__(self, model, array):
        if model == "detector":
            return self.probability(array)
        self.requests.append(array.shape)
        logits = np.full((len(array), output_length(array.shape[-1]), 37), -5, np.float32)
        logits[:, :, 11] = 5  # "a" at every step: each line reads "a"
        return logits


def page_of_words():
    image = Image.new("RGB", (700, 200), (240, 240, 240))
    ImageDraw.Draw(image).text((40, 60), "big red fox", font=ImageFont.truetype(FONT, 48), fill=(10, 10, 10))
    return png(image)


def three_word_map(pixels):
    probability = np.zeros(pixels.shape[:1] + (1,) + pixels.shape[2:], np.float32)
    _, _, height, width = pixels.shape
    probability[0, 0, int(height * 0.42):int(height * 0.5), int(width * 0.08):int(width * 0.45)] = 0.9
    return probability


@pytest.mark.parametrize(("batching", "requests"), [("ragged", [1, 1, 1]), ("none", [1, 1, 1]), ("padded", [3])])
def test_read_page_sends_the_crops_as_crop_batching_says(batching, requests):
    infer = Recorder(three_word_map)
    reading = asyncio.run(read_page(page_of_words(), PageSettings(crop_batching=batching), infer))
    assert [shape[0] for shape in infer.requests] == requests
    assert [r.text for r in reading.readings] == ["a", "a", "a"] and reading.corners.shape == (3, 4, 2)
    widths = {shape[-1] for shape in infer.requests}
    assert len(widths) == (1 if batching == "padded" else len(widths))


class UnsureAtFirst(Recorder):
    """Reads the first ``unsure`` crops it is sent as an unsure "a", every later one as a sure "b"."""

    def __init__(self, probability, unsure):
        super().__init__(probability)
        self.unsure = unsure

    async def __call__(self, model, array):
        logits = await super().__call__(model, array)
        if model == "recognizer" and len(self.requests) > self.unsure:
            logits[:, :, 12] = 10  # "b", surer than "a"
        elif model == "recognizer":
            logits[:, :, 11] = -4  # "a" by a hair: below any useful confidence
        return logits


@pytest.mark.parametrize(("below", "texts", "requests"), [(0.7, ["b"] * 3, 3 + 2 * 3), (0.0, ["a"] * 3, 3)])
def test_unsure_words_are_read_again_at_the_other_stretches_and_keep_the_surest_reading(below, texts, requests):
    infer = UnsureAtFirst(three_word_map, unsure=3)
    reading = asyncio.run(read_page(page_of_words(), PageSettings(read_again_below=below), infer))
    assert [r.text for r in reading.readings] == texts and len(infer.requests) == requests
    served, again = [shape[-1] for shape in infer.requests[:3]], [shape[-1] for shape in infer.requests[3:]]
    assert again == [restretched(np.zeros((32, w), np.uint8), stretch).shape[1]
                     for stretch in read_again_stretches(LINE_STRETCH) for w in served if below]


class SecondSurer(Recorder):
    """Reads each crop as an unsure "a", and each one sent to the second recogniser as a sure "c"."""

    def __init__(self, probability):
        super().__init__(probability)
        self.models = []

    async def __call__(self, model, array):
        logits = await super().__call__(model, array)
        self.models.append(model)
        logits[:, :, 11] = -4 if model == RECOGNIZER_STEP else logits[:, :, 11]
        logits[:, :, 13] = 10 if model == SECOND_RECOGNIZER_STEP else -5
        return logits


def test_a_second_recogniser_reads_the_unsure_words_as_served_and_at_the_other_stretches():
    infer = SecondSurer(three_word_map)
    settings = PageSettings(read_again_below=0.7, second_recognizer="text_recognition_second")
    reading = asyncio.run(read_page(page_of_words(), settings, infer))
    assert [r.text for r in reading.readings] == ["c"] * 3 and reading.read_again == 3
    assert infer.models.count(RECOGNIZER_STEP) == 3 + 2 * 3 and infer.models.count(SECOND_RECOGNIZER_STEP) == 3 * 3
    assert page_settings({"read_again_below": "0.7", "second_recognizer": " text_recognition_second "}
                         ).second_recognizer == "text_recognition_second"
    with pytest.raises(ValueError, match="'second_recognizer' names 'x', which reads the lines read again, but "
                                         "'read_again_below' is 0: set it above 0"):
        page_settings({"second_recognizer": "x"})


@pytest.mark.parametrize(("name", "keep"), [("most_confident", most_confident), ("most_agreed", most_agreed)])
def test_words_read_again_keep_the_reading_the_settings_name(monkeypatch, name, keep):
    kept = []

    async def reading_again(lines, first, below, limits, read, second, keep):
        kept.append(keep)
        return list(first), len(first)

    monkeypatch.setattr(page, "read_again_served", reading_again)
    settings = PageSettings(read_again_below=0.7, read_again_keeps=name)
    asyncio.run(read_page(page_of_words(), settings, UnsureAtFirst(three_word_map, unsure=3)))
    assert kept == [keep]


def test_a_page_without_text_reads_as_no_words():
    infer = Recorder(lambda pixels: np.zeros((1, 1, *pixels.shape[2:]), np.float32))
    reading = asyncio.run(read_page(page_of_words(), PageSettings(), infer))
    assert reading.corners.shape == (0, 4, 2) and reading.readings == [] and infer.requests == []


def test_a_cancelled_page_sends_no_crops():
    infer = Recorder(three_word_map)
    with pytest.raises(Cancelled):
        asyncio.run(read_page(page_of_words(), PageSettings(), infer, cancelled=lambda: True))
    assert infer.requests == []


def test_padded_batches_hold_at_most_max_crops_per_request():
    infer = Recorder(None)
    lines = [np.zeros((1, 32, 8 + i), np.float32) for i in range(7)]
    logits = asyncio.run(recognise(lines, PageSettings(crop_batching="padded", max_crops_per_request=3), infer))
    assert [shape[0] for shape in infer.requests] == [3, 3, 1]
    assert [len(x) for x in logits] == [output_length(line.shape[-1]) for line in lines]


def test_page_settings_come_from_the_config_and_bad_ones_say_what_to_change():
    settings = page_settings({"max_boxes": "7", "threshold": "0.2", "crop_batching": "padded"})
    assert (settings.max_boxes, settings.detector.threshold, settings.crop_batching) == (7, 0.2, "padded")
    with pytest.raises(ValueError, match="crop_batching.*ragged"):
        page_settings({"crop_batching": "sideways"})
    assert page_settings({"line_stretch": "1.0"}).lines.stretch == 1.0
    assert page_settings({}).lines.stretch == LINE_STRETCH
    for bad, says in [("wide", "line_stretch.*width factor"), ("0", "line_stretch.*from 0.25 to 4")]:
        with pytest.raises(ValueError, match=says):
            page_settings({"line_stretch": bad})
    assert line_limits({"line_stretch": "wide"}).stretch == LINE_STRETCH  # the recogniser stretches nothing
    assert page_settings({}).read_again_below == 0 and page_settings(
        {"read_again_below": "0.7"}).read_again_below == 0.7
    for bad in ("1.5", "-0.1", "nan", "sure"):
        with pytest.raises(ValueError, match="read_again_below.*a confidence from 0 .never. to 1"):
            page_settings({"read_again_below": bad})
    assert page_settings({"read_again_keeps": "most_confident"}).read_again_keeps == "most_confident"
    for bad_settings in (lambda: page_settings({"read_again_keeps": "loudest"}),
                         lambda: PageSettings(read_again_keeps="loudest")):
        with pytest.raises(ValueError, match="read_again_keeps.*most_agreed, most_confident"):
            bad_settings()


def test_the_page_models_code_loads_no_torch():
    import subprocess
    import sys

    code = "import sys, str_ocr.page, str_ocr.settings, str_ocr.detection; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"  # four ocr_page instances each would carry it otherwise


def test_grouped_crops_pad_each_group_by_at_most_group_padding():
    from str_ocr.page import width_groups

    widths = [100, 40, 124, 41, 300, 125, 50]
    groups = width_groups(widths, 0.25, 32)
    assert sorted(i for g in groups for i in g) == list(range(len(widths)))
    assert all(max(widths[i] for i in g) <= 1.25 * min(widths[i] for i in g) for g in groups)
    assert [sorted(widths[i] for i in g) for g in groups] == [[40, 41, 50], [100, 124, 125], [300]]
    assert all(len(g) <= 2 for g in width_groups(widths, 10.0, 2))


def test_a_crop_that_fails_fails_its_page_after_every_other_crop_is_answered():
    class FailingOnce(Recorder):
        async def __call__(self, model, array):
            if model == "recognizer" and not self.requests:
                self.requests.append(array.shape)
                raise RuntimeError("text_recognition: queue full")
            return await super().__call__(model, array)

    infer = FailingOnce(three_word_map)
    with pytest.raises(RuntimeError, match="queue full"):
        asyncio.run(read_page(page_of_words(), PageSettings(), infer))
    assert len(infer.requests) == 3  # the other two crops were still awaited, not left running


def test_words_past_max_words_are_dropped_and_counted():
    reading = asyncio.run(read_page(page_of_words(), PageSettings(max_words=2), Recorder(three_word_map)))
    assert len(reading.readings) == 2 and reading.dropped == 1


def test_a_page_keeps_at_most_max_requests_in_flight_waiting():
    class Counting(Recorder):
        waiting = most = 0

        async def __call__(self, model, array):
            Counting.waiting += 1
            Counting.most = max(Counting.most, Counting.waiting)
            await asyncio.sleep(0.001)
            Counting.waiting -= 1
            return await super().__call__(model, array)

    lines = [np.zeros((1, 32, 8 + i), np.float32) for i in range(20)]
    asyncio.run(recognise(lines, PageSettings(max_requests_in_flight=3), Counting(None)))
    assert Counting.most == 3
