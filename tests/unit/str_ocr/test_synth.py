import random

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont, features

from str_ocr import ALPHABET, INPUT_HEIGHT
from str_ocr import fonts, synth as synth_module
from str_ocr.fonts import font_files
from str_ocr.metrics import edit_distance, score
from str_ocr.preprocess import TUTORIAL_WIDTH
from str_ocr.synth import (CASE_WEIGHTS, CASES, CONFUSED_CHARACTERS, FIXED_MAX_CHARS, LONG_FIXED_MIN_CHARS, MAX_CHARS,
                           RANDOM_CHARACTERS_SHARE, TEXT_KINDS, WORD_LIKE_SHARE, TextLineSynth, Variety,
                           ctc_feasible)

HELD_OUT_OLD_STYLE = {"EBGaramond12-Regular", "EBGaramond12-Bold", "EBGaramond12-Italic"} | (
    {"OpenSans-Regular", "OpenSans-Bold", "OpenSans-Italic", "OpenSans-ExtraBold", "OpenSans-CondBold",
     "OpenSans-CondLight"} if features.check("raqm") else set())
"""The held-out faces with old-style figures: EB Garamond's by default, Open Sans' on asking (``onum``), which
only Raqm applies."""


def test_the_same_seed_draws_the_same_lines():
    a, b = TextLineSynth(5), TextLineSynth(5)
    for width in (None, TUTORIAL_WIDTH, None):
        sa, sb = a.sample(width), b.sample(width)
        assert sa.text == sb.text
        np.testing.assert_array_equal(sa.image, sb.image)


def test_a_line_stretch_draws_the_same_lines_wider_and_leaves_fixed_widths_alone():
    plain, stretched = TextLineSynth(5, line_stretch=1.0), TextLineSynth(5, line_stretch=1.3)
    for width in (None, TUTORIAL_WIDTH, None, None):
        a, b = plain.sample(width), stretched.sample(width)
        assert (a.text, a.face, a.case) == (b.text, b.face, b.case)
        if width is None:
            assert abs(b.image.shape[1] - 1.3 * a.image.shape[1]) <= 1
        else:
            assert a.image.shape == b.image.shape == (INPUT_HEIGHT, TUTORIAL_WIDTH)


def test_lines_are_grey_32_high_and_say_text_over_the_alphabet():
    synth = TextLineSynth(1)
    variable = [synth.sample() for _ in range(40)]
    fixed = [synth.sample(TUTORIAL_WIDTH) for _ in range(40)]
    for s in variable + fixed:
        assert s.image.dtype == np.uint8 and s.image.shape[0] == INPUT_HEIGHT
        assert 1 <= len(s.text) <= MAX_CHARS and set(s.text) <= set(ALPHABET)
    assert all(s.image.shape[1] == TUTORIAL_WIDTH and len(s.text) <= FIXED_MAX_CHARS for s in fixed)
    assert len({s.image.shape[1] for s in variable}) > 10  # widths follow the text


def test_each_line_says_what_kind_of_text_it_shows():
    synth = TextLineSynth(12, "core")
    samples = [synth.sample() for _ in range(150)]
    assert {s.kind for s in samples} == set(TEXT_KINDS) and {s.case for s in samples} == set(CASES)
    for s in samples:
        letters, digits = sum(c.isalpha() for c in s.text), sum(c.isdigit() for c in s.text)
        assert {"word-like": digits == 0, "digits": letters == 0,
                "code": letters > 0 and digits > 0 and s.text.strip("0123456789").isalpha(),
                "random characters": True}[s.kind], s


def test_a_case_names_how_the_letters_are_drawn():
    rng = random.Random(3)
    drawn = [synth_module._cased("ab1 cd", rng) for _ in range(60)]
    assert {case for _, case in drawn} == set(CASES)
    assert all(shown == {"lower": "ab1 cd", "UPPER": "AB1 CD", "Title": "Ab1 cd"}[case] for shown, case in drawn)


def test_lines_are_drawn_in_the_set_asked_for():
    assert TextLineSynth(1).fonts == font_files("training")
    held_out = TextLineSynth(1, "held-out")
    assert held_out.fonts == font_files("held-out")
    assert all(s.image.shape[0] == INPUT_HEIGHT for s in (held_out.sample() for _ in range(20)))


def test_each_line_names_the_face_it_is_drawn_in_as_a_line_or_as_a_crop():
    held_out = font_files("held-out")
    for variety in (Variety(), Variety(crops=1.0)):
        synth = TextLineSynth(4, "held-out", variety=variety)
        faces = [synth.sample(width).face for width in (None, TUTORIAL_WIDTH) * 15]
        assert set(faces) <= set(held_out) and len(set(faces)) > 5
    assert {TextLineSynth(4, held_out[:1]).sample().face for _ in range(5)} == {held_out[0]}


@pytest.mark.parametrize("share, light_text", [(0.0, False), (1.0, True)])
def test_polarity_is_chosen_by_the_variety(share, light_text):
    synth = TextLineSynth(2, variety=Variety(light_on_dark=share))
    assert all((ink > background) == light_text for background, ink in (synth._colours() for _ in range(50)))


@pytest.mark.parametrize("variety", [Variety(stretch=1.0), Variety(heavy=1.0), Variety(basic_layout=1.0),
                                     Variety(crops=1.0), Variety(warped_glyphs=1.0), Variety(thin=1.0),
                                     Variety(look_alikes=1.0)])
def test_each_variation_changes_the_lines(variety):
    plain, varied = TextLineSynth(4), TextLineSynth(4, variety=variety)
    pairs = [(plain.sample(), varied.sample()) for _ in range(10)]
    assert any(a.image.shape != b.image.shape or (a.image != b.image).any() for a, b in pairs)


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_look_alikes_draw_random_characters_from_the_characters_read_one_for_another(share):
    synth = TextLineSynth(6, "core", variety=Variety(look_alikes=share))
    texts = [text for text, kind in (synth.text_and_kind() for _ in range(300)) if kind == "random characters"]
    drawn = set("".join(texts))
    assert (drawn <= set(CONFUSED_CHARACTERS)) == (share == 1.0) and len(drawn) > len(CONFUSED_CHARACTERS) // 2
    words = [text for text, kind in (synth.text_and_kind() for _ in range(300)) if kind == "word-like"]
    assert not set("".join(words)) <= set(CONFUSED_CHARACTERS)  # other kinds of text are drawn as before


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_random_characters_take_that_share_of_the_other_kinds_lines(share):
    synth = TextLineSynth(9, "core", variety=Variety(random_characters=share))
    kinds = [synth.text_and_kind()[1] for _ in range(400)]
    wanted = RANDOM_CHARACTERS_SHARE + (1 - RANDOM_CHARACTERS_SHARE) * share
    assert abs(kinds.count("random characters") / len(kinds) - wanted) < 0.07
    assert ("word-like" in kinds) == (share < 1)
    rest = 1 - RANDOM_CHARACTERS_SHARE - WORD_LIKE_SHARE  # codes and digits
    assert abs(kinds.count("word-like") / len(kinds) - WORD_LIKE_SHARE * (1 - share)) < 0.07
    assert abs((kinds.count("code") + kinds.count("digits")) / len(kinds) - rest * (1 - share)) < 0.07


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_capitals_draw_that_share_of_lines_in_capitals_and_the_others_as_before(share):
    synth = TextLineSynth(8, "core", variety=Variety(capitals=share))
    cases = [synth.sample().case for _ in range(200)]
    as_before = CASE_WEIGHTS[CASES.index("UPPER")] / sum(CASE_WEIGHTS)
    assert abs(cases.count("UPPER") / len(cases) - (share + (1 - share) * as_before)) < 0.1
    assert ("lower" in cases) == (share < 1)


def test_balanced_kinds_draw_the_kinds_of_few_faces_as_often_as_the_others(monkeypatch):
    drawn = []
    font = synth_module._font
    monkeypatch.setattr(synth_module, "_font", lambda path, *rest: drawn.append(path) or font(path, *rest))
    small_kinds = {face.path for face in fonts.TRAINING if face.kind in ("square sans", "grotesque sans")}
    shares = []
    for balance in (0.0, 1.0):
        drawn.clear()
        synth = TextLineSynth(3, variety=Variety(balanced_kinds=balance))
        for _ in range(300):
            synth.sample()
        shares.append(sum(path in small_kinds for path in drawn) / len(drawn))
    assert shares[0] < 0.15 and shares[1] > 0.15  # 8 of 105 faces; 2 of 9 kinds


@pytest.mark.parametrize("share, wanted", [(0.0, None), (1.0, ["onum"])])
def test_old_style_figures_are_asked_of_the_face_as_often_as_the_variety_says(monkeypatch, share, wanted):
    asked = []
    text = ImageDraw.ImageDraw.text
    monkeypatch.setattr(ImageDraw.ImageDraw, "text", lambda *a, **kw: asked.append(kw["features"]) or text(*a, **kw))
    synth = TextLineSynth(3, variety=Variety(old_style_figures=share, basic_layout=0.5))  # no features without shaping
    for _ in range(20):
        synth.sample()
    assert len(asked) == 20 and wanted in asked and all(kind in (wanted, None) for kind in asked)


def test_old_style_figures_are_told_from_lining_ones_whether_the_face_draws_them_itself_or_by_onum():
    with_them = {path.stem for path in font_files("held-out") if synth_module.has_old_style_figures(path)}
    assert with_them == HELD_OUT_OLD_STYLE


def test_a_face_s_own_figures_are_told_apart_from_those_onum_draws():
    own = {path.stem for path in font_files("held-out") if synth_module.has_old_style_figures(path, ask_onum=False)}
    assert own == {"EBGaramond12-Regular", "EBGaramond12-Bold", "EBGaramond12-Italic"}


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_old_style_faces_are_drawn_with_their_figures_as_often_as_the_variety_says(monkeypatch, share):
    synth = TextLineSynth(6, "held-out", variety=Variety(old_style_faces=share))
    drawn, asked = [], []
    font, text = synth_module._font, ImageDraw.ImageDraw.text
    monkeypatch.setattr(synth_module, "_font", lambda path, *rest: drawn.append(path.stem) or font(path, *rest))
    monkeypatch.setattr(ImageDraw.ImageDraw, "text", lambda *a, **kw: asked.append(kw["features"]) or text(*a, **kw))
    for _ in range(40):
        synth.sample()
    assert len(drawn) == len(asked) == 40
    in_old_style_faces = sum(stem in HELD_OUT_OLD_STYLE for stem in drawn) / 40
    if share:
        assert in_old_style_faces == 1.0 and asked == [["onum"] if features.check("raqm") else None] * 40
    else:  # 9 of the 39 faces, and no figures asked for
        assert in_old_style_faces < 0.5 and asked == [None] * 40


def test_every_declared_face_draws_every_character_with_ink_as_a_line_asks_for_it():
    empty = []
    for path in font_files("extended") + font_files("held-out"):
        font = ImageFont.truetype(str(path), synth_module.OLD_STYLE_SIZE)
        for characters, old_style in [(ALPHABET + ALPHABET[10:].upper(), False), (ALPHABET[:10], True)]:
            asked = synth_module.figure_features(font, old_style)
            for character in characters:
                left, top, right, bottom = font.getbbox(character, features=asked)
                if not (right > left and bottom > top):
                    empty.append(f"{path.name} {character!r} {asked}")
    assert not empty, empty[:10]


def test_a_face_that_draws_a_line_as_nothing_is_named_instead_of_drawn(monkeypatch):
    karmilla = [path for path in font_files("extended") if path.stem == "Karmilla-Regular"]
    monkeypatch.setattr(synth_module, "_onum_figures_have_ink", lambda path: True)  # as before it was checked
    synth = TextLineSynth(1, karmilla, variety=Variety(old_style_figures=1.0))
    with pytest.raises(ValueError, match=r"Karmilla-Regular.ttf draws '123' as nothing under onum"):
        synth.render("123")


def test_old_style_faces_ask_for_a_set_that_has_some():
    lining = [path for path in font_files("held-out") if path.stem == "URWGothic-Book"]
    with pytest.raises(ValueError, match="none of these 1 faces has them"):
        TextLineSynth(1, lining, variety=Variety(old_style_faces=0.2))


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_long_fixed_lines_have_nine_characters_or_more_as_often_as_the_variety_says(share):
    synth = TextLineSynth(8, "core", variety=Variety(long_fixed=share))
    fixed = [len(synth.sample(TUTORIAL_WIDTH).text) for _ in range(30)]
    assert (min(fixed) >= LONG_FIXED_MIN_CHARS) == (share == 1.0) and max(fixed) <= FIXED_MAX_CHARS
    assert min(len(synth.sample().text) for _ in range(30)) < LONG_FIXED_MIN_CHARS  # variable width as before
    assert len(synth.sample(TUTORIAL_WIDTH, max_chars=4).text) <= 4  # a line's most still holds


def test_a_variation_of_no_share_draws_nothing_so_that_earlier_seeds_draw_the_same_lines():
    synth = TextLineSynth(1)
    state = synth.rng.getstate()
    assert not synth._chance(0.0) and synth.rng.getstate() == state
    synth._chance(0.5)
    assert synth.rng.getstate() != state  # a share above 0 does draw


@pytest.mark.parametrize("share, drawn", [(0.0, False), (1.0, True)])
def test_glyphs_are_bent_and_thinned_as_often_as_the_variety_says(monkeypatch, share, drawn):
    applied = []
    warped, thinned = TextLineSynth._warped, synth_module._thinned
    monkeypatch.setattr(TextLineSynth, "_warped", lambda *a: applied.append("warped") or warped(*a))
    monkeypatch.setattr(synth_module, "_thinned", lambda *a: applied.append("thinned") or thinned(*a))
    synth = TextLineSynth(5, variety=Variety(warped_glyphs=share, thin=share))
    for _ in range(30):
        synth.sample()
    assert ({"warped", "thinned"} <= set(applied)) == drawn and (applied == []) != drawn
    if drawn:
        assert applied.count("warped") == 30  # every line; thinning only those of THIN_MIN_SIZE or more


@pytest.mark.parametrize("ink, background", [(20, 230), (230, 20)])
def test_thinning_takes_ink_away_in_either_polarity_and_leaves_the_strokes(ink, background):
    canvas = Image.new("L", (120, 48), background)
    ImageDraw.Draw(canvas).text((4, 4), "Held", font=synth_module._font(fonts.font_files("core")[0], 36), fill=ink)
    thinned = synth_module._thinned(canvas, ink, background)
    assert 0.3 * _ink(canvas, background).sum() < _ink(thinned, background).sum() < 0.8 * _ink(canvas, background).sum()


def _ink(image: Image.Image | np.ndarray, background: int) -> np.ndarray:
    return abs(np.asarray(image, np.int16) - background) > 100


@pytest.mark.parametrize("size", [28, 40, 56])
def test_warped_glyphs_move_a_stroke_but_not_far(size):
    canvas = Image.new("L", (200, 120), 210)
    ImageDraw.Draw(canvas).rectangle((99, 10, 101, 110), fill=30)  # a vertical stroke: columns 99 to 101
    moved = []
    for seed in range(8):
        after = _ink(TextLineSynth(seed)._warped(canvas, size, 210), 210)
        assert 0.7 < after.sum() / _ink(canvas, 210).sum() < 1.3  # bent, not erased or smeared
        moved.append(max(abs(np.flatnonzero(row).mean() - 100) for row in after if row.any()))
    assert min(moved) > 0.25  # every field bends it
    assert max(moved) < 2 * synth_module.WARP_AMPLITUDE[1] * size  # none further than a knot's offset can reach


def test_crops_are_grey_lines_32_high_in_both_widths():
    synth = TextLineSynth(6, variety=Variety(crops=1.0))
    for width in (None, TUTORIAL_WIDTH) * 15:
        sample = synth.sample(width)
        assert sample.image.dtype == np.uint8 and sample.image.shape[0] == INPUT_HEIGHT
        assert width is None or sample.image.shape[1] == width
        assert sample.image.std() > 5  # something is drawn on the ground


def test_a_line_as_drawn_is_kept_only_when_asked_and_changes_nothing_else():
    kept, plain = TextLineSynth(7, keep_source=True), TextLineSynth(7)
    for width in (TUTORIAL_WIDTH, None):
        a, b = kept.sample(width), plain.sample(width)
        np.testing.assert_array_equal(a.image, b.image)
        assert b.source is None and a.source.ndim == 2 and a.source.dtype == np.uint8
    sources = [kept.sample(TUTORIAL_WIDTH).source for _ in range(10)]  # drawn at their own aspect ratio
    assert any(abs(s.shape[1] / s.shape[0] - TUTORIAL_WIDTH / INPUT_HEIGHT) > 0.5 for s in sources)


def test_ctc_feasibility_counts_blanks_between_repeats():
    assert ctc_feasible("abc", 3) and not ctc_feasible("aab", 3) and ctc_feasible("aab", 4)


def test_edit_distance_and_scores():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "abc") == 0
    scores = score(["abc", "abd", ""], ["abc", "abc", "xy"])
    assert scores.word_accuracy == pytest.approx(1 / 3)
    assert scores.cer == pytest.approx(3 / 8)
    with pytest.raises(ValueError):
        score(["a"], [])


def test_pages_are_reproducible_and_their_words_lie_on_them_in_reading_order():
    from str_ocr.detection import reading_order
    from str_ocr.synth import BACKGROUNDS, PageSynth

    first, again = PageSynth(seed=3, fonts="core"), PageSynth(seed=3, fonts="core")
    for background in BACKGROUNDS:
        page = first.page(background=background)
        twin = again.page(background=background)
        assert page.encoded() == twin.encoded() and [w.text for w in page.words] == [w.text for w in twin.words]
        corners = np.stack([w.corners for w in page.words])
        assert (corners > -40).all() and (corners[..., 0] < page.image.width + 40).all()
        assert reading_order(corners).tolist() == list(range(len(page.words)))
        assert all(w.text and set(w.text) <= set("0123456789abcdefghijklmnopqrstuvwxyz") for w in page.words)


def test_a_word_is_drawn_where_its_corners_say():
    from str_ocr.synth import PageSynth

    page = PageSynth(seed=5, fonts="core", max_angle=0).page(words=6, background="flat", layout="scene")
    grey = np.asarray(page.image.convert("L"), np.float32)
    for word in page.words:
        (left, top), (right, bottom) = word.corners.min(axis=0).astype(int), word.corners.max(axis=0).astype(int)
        inside = grey[top:bottom, left:right]
        ring = grey[max(0, top - 6):top - 2, left:right]
        if ring.size:
            assert abs(inside.mean() - ring.mean()) > 10  # ink inside the box, plain ground just outside


@pytest.mark.parametrize("shapes", [True, False])
def test_a_pillow_that_cannot_shape_text_is_told_what_to_install(monkeypatch, shapes):
    monkeypatch.setattr(synth_module.features, "check", lambda feature: shapes if feature == "raqm" else True)
    warning = synth_module.unshaped_warning()
    assert (warning is None) if shapes else "libfribidi0" in warning and "unshaped" in warning
