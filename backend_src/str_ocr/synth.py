"""Synthetic text lines for training and evaluation, rendered with Pillow in a declared font set.

Each line is a string over the alphabet (random characters, word-like syllables, or numbers and
codes) drawn in a random face of the set (``str_ocr.fonts``: ``training`` unless told), size, case
and polarity, then distorted the way photographed and scanned text is: margins, slight rotation and
shear, blur, noise, low contrast, JPEG artefacts. The result goes through ``preprocess.resize_line``,
as served images do. ``Variety`` adds more: light-on-dark lines, faces stretched or squeezed, drawn
heavier or thinner, laid out without shaping, with their glyphs bent, or drawn as a detector's crops
(``crop_effects``).

    synth = TextLineSynth(seed=1)
    sample = synth.sample()                      # variable width: height 32, LINE_STRETCH x aspect ratio
    sample = synth.sample(width=TUTORIAL_WIDTH)  # the tutorial's fixed 32x100
    unseen = TextLineSynth(seed=1, fonts="held-out", variety=Variety(light_on_dark=1.0))
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont, features

from . import crop_effects
from .detection import reading_order
from .fonts import by_kind, font_files
from .preprocess import LINE_STRETCH, TUTORIAL_WIDTH, resize_line
from .text import ALPHABET

MAX_CHARS = 25
FIXED_MAX_CHARS = 12
"""Longest string drawn into the tutorial's fixed 32x100 input: past about 12 characters each one
is squeezed under 8 pixels wide (2 time steps), which a reader of 32-pixel-high text cannot resolve."""
LONG_FIXED_MIN_CHARS = 9
"""Shortest string of a ``Variety.long_fixed`` line: from 9 characters on, each is squeezed to about 11 pixels or
less."""

THIN_MIN_SIZE = 36
"""Smallest font size thinned: below it, thinning erases more of a serif face's hairlines."""
WARP_AMPLITUDE = (0.02, 0.06)
"""Range of the largest offset at a knot of the glyph-bending field, as a share of the font size."""
OLD_STYLE_SIZE = 40
"""Font size at which ``has_old_style_figures`` measures a face's figures."""
OLD_STYLE_STEP = 0.08
"""Least step between the heights of a face's figures, as a share of the font size, that ``has_old_style_figures``
takes for old-style ones: lining figures stand within a pixel or two of each other."""

TEXT_KINDS = ("word-like", "random characters", "code", "digits")
"""What a drawn line says: syllables, any of 0-9a-z, letters and digits in two runs ("ab1234"), digits alone."""
RANDOM_CHARACTERS_SHARE = 0.35
"""The share of lines that say random characters, unless ``Variety.random_characters`` raises it."""
WORD_LIKE_SHARE = 0.45
"""The share of lines that say word-like syllables; the rest say codes or digits."""
CASES = ("lower", "UPPER", "Title")
"""How its letters are drawn: as written, in capitals, with a capital first."""
CASE_WEIGHTS = (5, 3, 2)
"""How often a line is drawn in each of ``CASES``: half as written (lower case), the others in capitals or with a
capital first."""

VOWELS, CONSONANTS = "aeiou", "bcdfghjklmnprstvwyz"
ONSETS = [*CONSONANTS, "br", "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr", "wh"]
CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "ng", "ck", "st", "nd", "rt"]
CONFUSED_CHARACTERS = "0o1ilt2z5s9gqaecuv"
"""The characters the recogniser most often reads one for another (0 and o, 1 and i or l, 5 and s, a and q, ...):
a line of them can only be read by the small differences between them, such as a 0 taller or narrower than an o.
More than ``metrics.LOOK_ALIKES``, the few that scoring may also take as one."""


@dataclass(frozen=True)
class Variety:
    """How often each variation is drawn, each a share of lines from 0 to 1. The defaults draw the
    lines the first weights were trained and measured on; other values draw other lines."""

    light_on_dark: float = 0.25
    stretch: float = 0.0
    """Lines stretched or squeezed horizontally (0.7x to 1.4x), as wider and narrower faces are."""
    heavy: float = 0.0
    """Lines drawn with a 1-pixel stroke around the glyphs, heavier than the face's own weight."""
    basic_layout: float = 0.0
    """Lines laid out glyph by glyph, without shaping: no ligatures such as "fl" and "fi", no kerning."""
    crops: float = 0.0
    """Lines drawn as a detector's crops of them (``crop_effects``): uneven margins, neighbours cut in, coloured
    and photographed grounds, shadows, perspective, curvature, motion blur, small text enlarged, spaced letters."""
    balanced_kinds: float = 0.0
    """Lines whose face is drawn kind first, every kind of the set (``str_ocr.fonts.Face.kind``) as often as
    another, so that kinds of few faces (old-style serif, geometric sans) are not drowned by the many serif and
    sans faces; the other lines (and those not drawn by ``old_style_faces``) draw any face of the set equally often."""
    old_style_figures: float = 0.0
    """Lines (not crops) drawn with their face's old-style figures (OpenType ``onum``) where it has them: digits that
    rise and descend like letters, 0 round as o and 1 small as i, as some faces draw digits by default."""
    warped_glyphs: float = 0.0
    """Lines (not crops) whose glyphs are bent by a smooth random displacement (``TextLineSynth._warped``), so that
    each face is also seen in shapes near its own, as other faces draw the same letters."""
    thin: float = 0.0
    """Lines (not crops, not drawn heavier) in a font size of ``THIN_MIN_SIZE`` or more whose strokes are thinned
    (``_thinned``), as light weights of their face would draw them; the share of all lines is smaller by the lines
    that are neither."""
    old_style_faces: float = 0.0
    """Lines drawn in one of the set's faces that have old-style figures (``has_old_style_figures``), asking for them
    (``onum``) where the line is shaped and not a crop; a face whose own figures are old-style shows them on every
    line. A set holds few such faces, and ``old_style_figures`` shows their figures only on the lines that happen to
    draw one. Drawn before ``balanced_kinds``, whose share then applies to the other lines."""
    look_alikes: float = 0.0
    """Lines of random characters whose characters are drawn from ``CONFUSED_CHARACTERS`` alone, not from all of
    0-9a-z."""
    random_characters: float = 0.0
    """Lines of random characters in place of the other kinds of text (``TEXT_KINDS``) they would have said: their
    share of all lines rises from ``RANDOM_CHARACTERS_SHARE`` to that plus the rest times this. Most of the lines
    read wrong in faces no run draws are of random characters, where no word tells a 0 from an o."""
    long_fixed: float = 0.0
    """Fixed 32x100 lines of ``LONG_FIXED_MIN_CHARS`` characters or more (up to the line's most): the lines squeezed
    narrowest."""
    capitals: float = 0.0
    """Lines drawn in capitals, whatever case (``CASE_WEIGHTS``) the others draw: where 0 and O are both as tall as
    the capitals, only their width and shape tell them apart."""


def figure_features(font: ImageFont.FreeTypeFont, old_style: bool) -> list[str] | None:
    """The OpenType features to draw with: old-style figures (``onum``) if asked for, Pillow shapes the font with
    Raqm, which alone applies features, and the face's ``onum`` figures have outlines; otherwise none, and the face
    draws its own figures."""
    wanted = old_style and font.layout_engine == ImageFont.Layout.RAQM
    return ["onum"] if wanted and _onum_figures_have_ink(font.path) else None


@lru_cache(maxsize=None)
def _onum_figures_have_ink(path: str) -> bool:
    """Whether every figure the face draws under ``onum`` has an outline. Karmilla's have none: asked for them, it
    would draw a line's digits as nothing, under a text that still holds them."""
    font = ImageFont.truetype(path, OLD_STYLE_SIZE)
    return all(_has_ink(font.getbbox(figure, features=["onum"])) for figure in "0123456789")


def _has_ink(box: tuple[int, int, int, int]) -> bool:
    """Whether a bounding box (left, top, right, bottom) holds at least a pixel."""
    left, top, right, bottom = box
    return right > left and bottom > top


@lru_cache(maxsize=None)
def has_old_style_figures(path: Path, *, ask_onum: bool = True) -> bool:
    """Whether the face draws old-style figures: its own, or with ``ask_onum`` those ``onum`` draws
    (``figure_features``). Old-style: a 0 whose top stands below an 8's and a 9 whose foot reaches below the 0's,
    each by more than ``OLD_STYLE_STEP`` of the size. A face without one of them draws the same missing-glyph box for
    all three, and has none."""
    font = ImageFont.truetype(str(path), OLD_STYLE_SIZE)
    asked = figure_features(font, old_style=ask_onum)
    _, zero_top, _, zero_bottom = font.getbbox("0", features=asked)
    eight_top, nine_bottom = font.getbbox("8", features=asked)[1], font.getbbox("9", features=asked)[3]
    step = OLD_STYLE_STEP * OLD_STYLE_SIZE
    return zero_top - eight_top > step and nine_bottom - zero_bottom > step


def old_style_faces(paths: Sequence[Path]) -> list[Path]:
    """The faces of ``paths`` that have old-style figures; ``ValueError`` if none has, for ``Variety.old_style_faces``
    would have no face to draw."""
    faces = [path for path in paths if has_old_style_figures(path)]
    if not faces:
        shaping = ("" if features.check("raqm")
                   else " (Pillow has no Raqm here: only faces drawing them by default count)")
        raise ValueError(f"old_style_faces (--old-style-faces) draws faces with old-style figures, and none of these "
                         f"{len(paths)} faces has them{shaping}: set it to 0 or draw from a set that has some, "
                         "such as the extended faces")
    return faces


@lru_cache(maxsize=1024)
def _font(path: Path, size: int, basic_layout: bool = False) -> ImageFont.FreeTypeFont:
    engine = ImageFont.Layout.BASIC if basic_layout else None  # None: Raqm where Pillow has it
    return ImageFont.truetype(str(path), size, layout_engine=engine)


@dataclass(frozen=True)
class Sample:
    """A rendered line: grey levels ``[32, W]`` (uint8) and the text it shows (lower case); with ``keep_source``,
    also the line as drawn, at its own size and aspect ratio, before it was scaled and degraded. A line drawn by
    ``TextLineSynth.sample`` also says which of ``TEXT_KINDS`` its text is, in which of ``CASES`` and in which face
    (a font file) it was drawn."""

    image: np.ndarray
    text: str
    source: np.ndarray | None = None
    kind: str | None = None
    case: str | None = None
    face: Path | None = None


class TextLineSynth:
    """A seeded, endless source of text-line images; the same seed, fonts and variety give the same lines.
    ``fonts`` is a declared set's name (``str_ocr.fonts.FONT_SETS``) or a list of font files. ``line_stretch`` is
    ``preprocess.scaled_width``'s ``stretch`` for lines drawn without a width: one seed at two stretches draws the
    same texts in the same faces, sizes and effects (only the noise differs)."""

    def __init__(self, seed: int, fonts: str | Sequence[Path] = "training", max_width: int = 2048,
                 variety: Variety = Variety(), keep_source: bool = False, line_stretch: float = LINE_STRETCH) -> None:
        self.keep_source = keep_source
        self.line_stretch = line_stretch
        self.rng = random.Random(seed)
        self.noise = np.random.default_rng(seed)
        self.fonts = font_files(fonts) if isinstance(fonts, str) else list(fonts)
        self.kinds = by_kind(self.fonts)
        self.max_width = max_width
        self.variety = variety
        self.old_style_fonts = old_style_faces(self.fonts) if variety.old_style_faces > 0 else []

    # --- what the line says ---

    def random_text(self, max_chars: int = MAX_CHARS) -> str:
        """1 to ``max_chars`` characters: random ones, word-like syllables, or numbers and codes."""
        return self.text_and_kind(max_chars)[0]

    def text_and_kind(self, max_chars: int = MAX_CHARS, min_chars: int = 1) -> tuple[str, str]:
        """``random_text`` of ``min_chars`` to ``max_chars`` characters, and which of ``TEXT_KINDS`` it is."""
        rng = self.rng
        length = rng.randint(min(min_chars, max_chars), max_chars)
        kind = rng.random()
        if kind < RANDOM_CHARACTERS_SHARE or self._chance(self.variety.random_characters):
            alphabet = CONFUSED_CHARACTERS if self._chance(self.variety.look_alikes) else ALPHABET
            return "".join(rng.choice(alphabet) for _ in range(length)), "random characters"
        if kind < RANDOM_CHARACTERS_SHARE + WORD_LIKE_SHARE:
            word = ""
            while len(word) < length:
                word += rng.choice(ONSETS) + rng.choice(VOWELS) * rng.choice([1, 1, 1, 2]) + rng.choice(CODAS)
            return word[:length], "word-like"
        digits = "".join(rng.choice("0123456789") for _ in range(length))
        if length > 3 and rng.random() < 0.5:  # a code such as "ab1234" or "2024x"
            cut = rng.randint(1, length - 1)
            letters = "".join(rng.choice(ALPHABET[10:]) for _ in range(cut))
            return (letters + digits[cut:] if rng.random() < 0.5 else digits[cut:] + letters), "code"
        return digits, "digits"

    # --- how it looks ---

    def _colours(self) -> tuple[int, int]:
        """Background and ink grey levels, at least 60 levels apart, either polarity."""
        contrast = self.rng.randint(60, 230)
        background = self.rng.randint(contrast, 255)
        ink = background - contrast
        light_on_dark = self.rng.random() >= 1 - self.variety.light_on_dark
        return (ink, background) if light_on_dark else (background, ink)

    def _chance(self, share: float) -> bool:
        """Whether to apply a variation of this ``share``; draws nothing when it is 0, so that
        the default variety draws the same lines as before it existed."""
        return share > 0 and self.rng.random() < share

    def _draw(self, shown: str) -> tuple[Image.Image, Path]:
        """``shown`` drawn, and the face it is drawn in."""
        rng = self.rng
        size = rng.randint(28, 56)
        in_old_style_face = self._chance(self.variety.old_style_faces)
        if in_old_style_face:
            path = rng.choice(self.old_style_fonts)
        elif self._chance(self.variety.balanced_kinds):
            path = rng.choice(rng.choice(self.kinds))
        else:
            path = rng.choice(self.fonts)
        font = _font(path, size, self._chance(self.variety.basic_layout))
        background, ink = self._colours()
        stroke = 1 if self._chance(self.variety.heavy) else 0
        if self._chance(self.variety.crops):
            crop, edge = crop_effects.draw_crop(shown, font, stroke, self.random_text(), _photo(rng.choice(PHOTOS)),
                                                rng, self.noise)
            return self._distort(self._stretched(crop), edge), path
        asked = figure_features(font, in_old_style_face or self._chance(self.variety.old_style_figures))
        left, top, right, bottom = box = font.getbbox(shown, stroke_width=stroke, features=asked)
        if not _has_ink(box):
            raise ValueError(f"{path.name} draws {shown!r} as nothing{' under onum' if asked else ''}: leave the face "
                             "out of the faces lines are drawn in")
        margin_x = [int(rng.uniform(0.0, 0.5) * size) for _ in range(2)]
        margin_y = [int(rng.uniform(0.0, 0.3) * size) for _ in range(2)]
        canvas = Image.new("L", (right - left + sum(margin_x), bottom - top + sum(margin_y)), background)
        ImageDraw.Draw(canvas).text((margin_x[0] - left, margin_y[0] - top), shown, font=font, fill=ink,
                                    stroke_width=stroke, stroke_fill=ink, features=asked)
        if stroke == 0 and size >= THIN_MIN_SIZE and self._chance(self.variety.thin):
            canvas = _thinned(canvas, ink, background)
        if self._chance(self.variety.warped_glyphs):
            canvas = self._warped(canvas, size, background)
        return self._distort(self._stretched(canvas), background), path

    def _warped(self, image: Image.Image, size: int, background: int) -> Image.Image:
        """``image`` displaced by a smooth random field: random offsets on a grid of knots half a font size apart,
        each up to ``WARP_AMPLITUDE`` of ``size``, interpolated cubically between them (which can overshoot a knot's
        offset). Ink moved past the edge is lost; the ground fills what is uncovered."""
        height, width = image.height, image.width
        knot_rows, knot_columns = max(2, round(2 * height / size) + 1), max(2, round(2 * width / size) + 1)
        amplitude = self.rng.uniform(*WARP_AMPLITUDE) * size
        dx, dy = (cv2.resize(self.noise.uniform(-amplitude, amplitude, (knot_rows, knot_columns)).astype(np.float32),
                             (width, height), interpolation=cv2.INTER_CUBIC) for _ in range(2))
        columns, rows = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
        warped = cv2.remap(np.asarray(image), columns + dx, rows + dy, cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=background)
        return Image.fromarray(warped)

    def _stretched(self, image: Image.Image) -> Image.Image:
        if not self._chance(self.variety.stretch):
            return image
        factor = self.rng.uniform(0.7, 1.4)
        return image.resize((max(1, round(image.width * factor)), image.height), Image.Resampling.BILINEAR)

    def _distort(self, image: Image.Image, background: int) -> Image.Image:
        rng = self.rng
        if rng.random() < 0.5:
            shear = rng.uniform(-0.3, 0.3)
            width = image.width + int(abs(shear) * image.height)
            offset = -shear * image.height if shear > 0 else 0
            image = image.transform((width, image.height), Image.Transform.AFFINE, (1, shear, offset, 0, 1, 0),
                                    Image.Resampling.BILINEAR, fillcolor=background)
        if rng.random() < 0.5:
            image = image.rotate(rng.uniform(-3, 3), Image.Resampling.BILINEAR, expand=True, fillcolor=background)
        if rng.random() < 0.5:
            image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.5)))
        return image

    def _degrade(self, image: Image.Image) -> np.ndarray:
        """Noise, contrast and JPEG artefacts, applied at the recogniser's resolution."""
        rng = self.rng
        pixels = np.asarray(image, dtype=np.float32)
        if rng.random() < 0.3:
            mean = pixels.mean()
            pixels = mean + (pixels - mean) * rng.uniform(0.5, 1.0)
        if rng.random() < 0.5:
            pixels = pixels + self.noise.normal(0, rng.uniform(2, 12), pixels.shape)
        pixels = np.clip(pixels, 0, 255).astype(np.uint8)
        if rng.random() < 0.2:
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "JPEG", quality=rng.randint(30, 90))
            pixels = np.asarray(Image.open(buffer).convert("L"))
        return pixels

    def render(self, text: str, width: int | None = None) -> np.ndarray:
        """``text`` as a ``[32, W]`` uint8 line: ``width`` wide if given, else ``line_stretch`` times as wide as its
        aspect ratio."""
        return self._render(text, width)[0]

    def _render(self, text: str, width: int | None) -> tuple[np.ndarray, Image.Image, str, Path]:
        shown, case = _cased(text, self.rng, self._chance(self.variety.capitals))
        drawn, face = self._draw(shown)
        line = resize_line(drawn, width, max_width=self.max_width, stretch=self.line_stretch)
        return self._degrade(line), drawn, case, face

    def sample(self, width: int | None = None, max_chars: int | None = None) -> Sample:
        """A random line; at the tutorial's 32x100, strings of at most ``FIXED_MAX_CHARS`` (``Variety.long_fixed``'s
        share of them of ``LONG_FIXED_MIN_CHARS`` or more)."""
        if max_chars is None:
            max_chars = FIXED_MAX_CHARS if width == TUTORIAL_WIDTH else MAX_CHARS
        long = width == TUTORIAL_WIDTH and self._chance(self.variety.long_fixed)
        text, kind = self.text_and_kind(max_chars, LONG_FIXED_MIN_CHARS if long else 1)
        line, drawn, case, face = self._render(text, width)
        return Sample(line, text, np.asarray(drawn) if self.keep_source else None, kind, case, face)


def _cased(text: str, rng: random.Random, in_capitals: bool = False) -> tuple[str, str]:
    """``text`` as drawn, and which of ``CASES``: in capitals if ``in_capitals``, else drawn by ``CASE_WEIGHTS``."""
    case = "UPPER" if in_capitals else rng.choices(CASES, CASE_WEIGHTS)[0]
    return {"lower": text, "UPPER": text.upper(), "Title": text.capitalize()}[case], case


def _thinned(image: Image.Image, ink: int, background: int) -> Image.Image:
    """``image`` with the ground spread a pixel into the ink from every side (a 3x3 rank filter): each stroke about
    two pixels thinner, a hairline of one or two pixels gone."""
    return image.filter(ImageFilter.MaxFilter(3) if ink < background else ImageFilter.MinFilter(3))


def unshaped_warning() -> str | None:
    """What to tell whoever draws lines with a Pillow that cannot shape text (no Raqm, which needs the system's
    libfribidi): its lines differ from those drawn where it can, the recorded figures' among them. None where it can."""
    if features.check("raqm"):
        return None
    return ("this Pillow cannot shape text (Raqm needs the system's libfribidi0): every line is drawn unshaped and "
            "none with old-style figures, unlike the lines the recorded figures were read from; install libfribidi0")


def ctc_feasible(text: str, time_steps: int) -> bool:
    """Whether CTC can emit ``text`` in ``time_steps`` steps (one per character, plus a blank between repeats)."""
    repeats = sum(a == b for a, b in zip(text, text[1:]))
    return len(text) + repeats <= time_steps



# --- Whole pages -----------------------------------------------------------------------------------------------

BACKGROUNDS = ("paper", "flat", "photo")
PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "brick.png", "grass.png", "gravel.png",
          "motorcycle_left.png", "hubble_deep_field.jpg", "coins.png", "camera.png", "moon.png", "ihc.png")
"""Photographs without text among those scikit-image ships (``skimage/data``)."""
LAYOUTS = ("scene", "document")


@dataclass(frozen=True)
class PageWord:
    """A word drawn on a page: its text (lower case), the corners ``[4, 2]`` of its ink (clockwise from top-left,
    in the page's pixels), and the face it is drawn in."""

    text: str
    corners: np.ndarray
    face: Path


@dataclass(frozen=True)
class SynthPage:
    """A page image (RGB) with the words on it, in reading order, and what it is drawn over."""

    image: Image.Image
    words: list[PageWord]
    background: str
    layout: str

    def encoded(self, format: str = "PNG", quality: int = 90) -> bytes:  # noqa: A002 - Pillow's own word
        buffer = io.BytesIO()
        self.image.save(buffer, format, **({"quality": quality} if format == "JPEG" else {}))
        return buffer.getvalue()


@lru_cache(maxsize=None)
def _photo(name: str) -> Image.Image:
    import importlib.util  # noqa: PLC0415

    folder = Path(importlib.util.find_spec("skimage").origin).parent / "data"  # the files only: skimage not imported
    return Image.open(folder / name).convert("RGB")


class PageSynth:
    """Seeded pages of words: scattered words of many sizes (``scene``) or lines of words (``document``), in the
    faces of a declared set, in colours over paper, flat colour or a photograph, turned by up to ``max_angle``
    degrees, some noisy, blurred or saved as JPEG. The same seed and fonts give the same pages.

        page = PageSynth(seed=1, fonts="held-out").page()
        page.encoded(), [(word.text, word.corners) for word in page.words]
    """

    def __init__(self, seed: int, fonts: str | Sequence[Path] = "training", size: tuple[int, int] = (960, 720),
                 max_angle: float = 4.0) -> None:
        self.lines = TextLineSynth(seed, fonts)
        self.rng, self.noise = self.lines.rng, self.lines.noise
        self.size, self.max_angle = size, max_angle

    def page(self, words: int | None = None, background: str | None = None, layout: str | None = None) -> SynthPage:
        rng = self.rng
        background = background or rng.choice(BACKGROUNDS)
        layout = layout or rng.choice(LAYOUTS)
        canvas = self._background(background)
        ground = np.asarray(canvas.convert("L"), np.float32)
        ink = Image.new("L", self.size, 0)  # where the words are
        paint = Image.new("RGB", self.size)  # and in which colour, each word its own
        count = words or (rng.randint(5, 30) if layout == "scene" else rng.randint(20, 80))
        placed = (self._scatter if layout == "scene" else self._lines)(Ink(ink, paint, ground), count)
        angle = rng.uniform(-self.max_angle, self.max_angle)
        centre = (self.size[0] / 2, self.size[1] / 2)
        ink = ink.rotate(angle, Image.Resampling.BILINEAR, center=centre)
        paint = paint.rotate(angle, Image.Resampling.NEAREST, center=centre)
        placed = [PageWord(w.text, self._turned(w.corners, angle), w.face) for w in placed]
        if placed:
            placed = [placed[i] for i in reading_order(np.stack([w.corners for w in placed]))]
        canvas.paste(paint, mask=ink)
        return SynthPage(self._degrade_page(canvas), placed, background, layout)

    def _background(self, kind: str) -> Image.Image:
        rng = self.rng
        if kind == "photo":
            photo = _photo(rng.choice(PHOTOS))
            scale = max(self.size[0] / photo.width, self.size[1] / photo.height) * rng.uniform(1.0, 1.5)
            photo = photo.resize((round(photo.width * scale) + 1, round(photo.height * scale) + 1))
            left, top = rng.randint(0, photo.width - self.size[0]), rng.randint(0, photo.height - self.size[1])
            return photo.crop((left, top, left + self.size[0], top + self.size[1]))
        if kind == "paper":
            tone = np.array([rng.randint(225, 255), rng.randint(215, 250), rng.randint(195, 240)], np.float32)
            grain = self.noise.normal(0, rng.uniform(2, 8), (self.size[1], self.size[0], 1))
            shade = np.linspace(rng.uniform(-15, 0), rng.uniform(0, 10), self.size[0])[np.newaxis, :, np.newaxis]
            return Image.fromarray(np.clip(tone + grain + shade, 0, 255).astype(np.uint8))
        return Image.new("RGB", self.size, tuple(rng.randint(0, 255) for _ in range(3)))

    def _word(self, size: int) -> tuple[str, str, Path, ImageFont.FreeTypeFont]:
        text = self.lines.random_text(12) if self.rng.random() < 0.5 else self.lines.random_text(8)
        shown, _ = _cased(text, self.rng)
        face = self.rng.choice(self.lines.fonts)
        return text, shown, face, _font(face, size)

    def _scatter(self, ink: Ink, count: int) -> list[PageWord]:
        """Words of random sizes at random places, none touching another."""
        taken, placed = [], []
        for _ in range(count * 10):
            if len(placed) == count:
                break
            text, shown, face, font = self._word(self.rng.randint(16, 72))
            left, top, right, bottom = font.getbbox(shown)
            x = self.rng.randint(8, max(8, self.size[0] - (right - left) - 8))
            y = self.rng.randint(8, max(8, self.size[1] - (bottom - top) - 8))
            box = (x - 12, y - 12, x + right - left + 12, y + bottom - top + 12)
            if right - left > self.size[0] - 16 or any(_overlap(box, other) for other in taken):
                continue
            taken.append(box)
            ink.draw((x - left, y - top), shown, font, self._ink_colour(ink.ground, box))
            placed.append(PageWord(text, _rectangle(x, y, right - left, bottom - top), face))
        return placed

    def _lines(self, ink: Ink, count: int) -> list[PageWord]:
        """Lines of words in one size and face, a space apart, from the top left, as on a printed page."""
        size = self.rng.randint(18, 40)
        _, _, face, font = self._word(size)
        space = font.getlength(" ")
        placed = []
        x, y, margin = 30.0, 30.0, 30
        while len(placed) < count:
            text, shown, _, _ = self._word(size)
            left, top, right, bottom = font.getbbox(shown)
            ascent = font.getbbox("Hd")[1]
            if x + font.getlength(shown) > self.size[0] - margin:
                x, y = float(margin), y + size * 1.6
            if y + size * 1.4 > self.size[1] - margin:
                break
            box = (x, y, x + font.getlength(shown), y + size * 1.4)
            ink.draw((x, y), shown, font, self._ink_colour(ink.ground, box))
            placed.append(PageWord(text, _rectangle(x + left, y + min(top, ascent), right - left,
                                                    bottom - min(top, ascent)), face))
            x += font.getlength(shown) + space
        return placed

    def _turned(self, corners: np.ndarray, angle: float) -> np.ndarray:
        """Corners after ``Image.rotate(angle)`` about the page's centre (counter-clockwise on screen)."""
        centre = np.array(self.size, np.float32) / 2
        radians = np.deg2rad(angle)
        rotation = np.array([[np.cos(radians), np.sin(radians)], [-np.sin(radians), np.cos(radians)]], np.float32)
        return (corners - centre) @ rotation.T + centre

    def _ink_colour(self, ground: np.ndarray, box: tuple) -> tuple[int, int, int]:
        """A colour that stands out from the ground under ``box``: dark on light ground, light on dark."""
        left, top, right, bottom = (int(round(v)) for v in box)
        under = ground[max(0, top):max(top + 1, bottom), max(0, left):max(left + 1, right)]
        light_ground = (under.mean() if under.size else 128.0) >= 128
        level = self.rng.randint(0, 70) if light_ground else self.rng.randint(185, 255)
        tint = [self.rng.randint(-40, 40) for _ in range(3)]
        return tuple(int(np.clip(level + t, 0, 255)) for t in tint)

    def _degrade_page(self, image: Image.Image) -> Image.Image:
        rng = self.rng
        if rng.random() < 0.3:
            image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.2)))
        if rng.random() < 0.3:
            pixels = np.asarray(image, np.float32) + self.noise.normal(0, rng.uniform(3, 12), (*image.size[::-1], 3))
            image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        if rng.random() < 0.3:
            buffer = io.BytesIO()
            image.save(buffer, "JPEG", quality=rng.randint(40, 90))
            image = Image.open(buffer).convert("RGB")
        return image


@dataclass(frozen=True)
class Ink:
    """Where words are drawn on a page: their coverage (``mask``), their colours (``paint``), over ``ground``, the
    page's grey levels before any word."""

    mask: Image.Image
    paint: Image.Image
    ground: np.ndarray

    def draw(self, position: tuple[float, float], text: str, font: ImageFont.FreeTypeFont,
             colour: tuple[int, int, int]) -> None:
        mask = ImageDraw.Draw(self.mask)
        mask.text(position, text, font=font, fill=255)
        left, top, right, bottom = mask.textbbox(position, text, font=font)
        ImageDraw.Draw(self.paint).rectangle((left - 2, top - 2, right + 2, bottom + 2), fill=colour)


def _rectangle(x: float, y: float, width: float, height: float) -> np.ndarray:
    return np.array([[x, y], [x + width, y], [x + width, y + height], [x, y + height]], np.float32)


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
