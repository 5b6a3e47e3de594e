"""The declared font faces: every face the synthetic lines are drawn in, named with its Debian package.

Nothing reads "whatever is under /usr/share/fonts": installing a font package must not change the
training data, the evaluation sets or what the tests render. Three sets:

- ``core``: the DejaVu, Liberation and FreeFont faces the first weights were trained on (the
  README's "current" sets are drawn from them);
- ``training``: ``core`` and more faces of every kind: condensed, serif, humanist and geometric sans,
  mono, light to black weights, italics;
- ``held-out``: faces that training never sees, including kinds it has none of (rounded and slab
  serif faces), to measure how the recogniser reads text in fonts it does not know;
- ``extended``: ``training`` and several hundred faces more from about a hundred Debian packages (serif,
  sans, slab, mono, condensed, rounded, signage, display, handwriting-like), listed in
  ``extended_faces.tsv`` by ``scripts/declare_faces.py``; installed by ``make fonts`` (only training and
  evaluation need them), none of them a held-out face or a relative of one (``HELD_OUT_RELATIVES``).

``training`` and ``held-out`` never share a face. This module uses the standard library only, so that
``scripts/setup_system.sh`` can ask it, before any virtualenv exists, which packages are missing:

    python3 backend_src/str_ocr/fonts.py missing-packages [SET ...]   # default: the sets `make setup` installs
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

FONT_ROOT = Path(os.environ.get("STR_OCR_FONT_ROOT", "/usr/share/fonts"))
"""Where the declared faces lie: Debian's folder, or one that ``scripts/pack_faces.py`` filled (a training
machine without the packages)."""


@dataclass(frozen=True)
class Face:
    """One font file under ``FONT_ROOT``, the Debian package that installs it, and its kind."""

    file: str
    package: str
    kind: str

    @property
    def path(self) -> Path:
        return FONT_ROOT / self.file


def _family(package: str, folder: str, kind: str, names: str, suffix: str = ".otf") -> list[Face]:
    return [Face(f"{folder}/{name}{suffix}", package, kind) for name in names.split()]


def _dejavu(names: str, kind: str) -> list[Face]:
    # fonts-dejavu-core has the regular and bold Sans, Sans Mono and Serif; fonts-dejavu-extra the rest.
    core = {"DejaVuSans", "DejaVuSans-Bold", "DejaVuSansMono", "DejaVuSansMono-Bold", "DejaVuSerif", "DejaVuSerif-Bold"}
    return [Face(f"truetype/dejavu/{n}.ttf", "fonts-dejavu-core" if n in core else "fonts-dejavu-extra", kind)
            for n in names.split()]


_CORE = [
    *_dejavu("DejaVuSans DejaVuSans-Bold DejaVuSans-Oblique DejaVuSans-BoldOblique DejaVuSans-ExtraLight", "sans"),
    *_dejavu("DejaVuSansCondensed DejaVuSansCondensed-Bold DejaVuSansCondensed-Oblique "
             "DejaVuSansCondensed-BoldOblique", "condensed sans"),
    *_dejavu("DejaVuSansMono DejaVuSansMono-Bold DejaVuSansMono-Oblique DejaVuSansMono-BoldOblique", "mono"),
    *_dejavu("DejaVuSerif DejaVuSerif-Bold DejaVuSerif-Italic DejaVuSerif-BoldItalic DejaVuMathTeXGyre", "serif"),
    *_dejavu("DejaVuSerifCondensed DejaVuSerifCondensed-Bold DejaVuSerifCondensed-Italic "
             "DejaVuSerifCondensed-BoldItalic", "serif"),
    *_family("fonts-liberation2", "truetype/liberation2", "sans",
             "LiberationSans-Regular LiberationSans-Bold LiberationSans-Italic LiberationSans-BoldItalic", ".ttf"),
    *_family("fonts-liberation2", "truetype/liberation2", "serif",
             "LiberationSerif-Regular LiberationSerif-Bold LiberationSerif-Italic LiberationSerif-BoldItalic", ".ttf"),
    *_family("fonts-liberation2", "truetype/liberation2", "mono",
             "LiberationMono-Regular LiberationMono-Bold LiberationMono-Italic LiberationMono-BoldItalic", ".ttf"),
    *_family("fonts-freefont-ttf", "truetype/freefont", "sans",
             "FreeSans FreeSansBold FreeSansOblique FreeSansBoldOblique", ".ttf"),
    *_family("fonts-freefont-ttf", "truetype/freefont", "serif",
             "FreeSerif FreeSerifBold FreeSerifItalic FreeSerifBoldItalic", ".ttf"),
    *_family("fonts-freefont-ttf", "truetype/freefont", "mono",
             "FreeMono FreeMonoBold FreeMonoOblique FreeMonoBoldOblique", ".ttf"),
]
# Sorted by file name: the order the first weights' lines were drawn in, so that a seed draws the same lines.
CORE = sorted(_CORE, key=lambda face: Path(face.file).name)

_URW = "opentype/urw-base35"
_ROBOTO = "truetype/roboto/unhinted"
TRAINING = CORE + [
    *_family("fonts-urw-base35", _URW, "condensed sans",
             "NimbusSansNarrow-Regular NimbusSansNarrow-Bold NimbusSansNarrow-Oblique NimbusSansNarrow-BoldOblique"),
    *_family("fonts-urw-base35", _URW, "serif", "C059-Roman C059-Bold C059-Italic C059-BdIta "
             "URWBookman-Light URWBookman-Demi URWBookman-LightItalic URWBookman-DemiItalic"),
    *_family("fonts-urw-base35", _URW, "old-style serif", "P052-Roman P052-Bold P052-Italic P052-BoldItalic"),
    *_family("fonts-urw-base35", _URW, "mono", "NimbusMonoPS-Regular NimbusMonoPS-Bold"),
    *_family("fonts-roboto-unhinted", f"{_ROBOTO}/RobotoTTF", "sans",
              "Roboto-Regular Roboto-Bold Roboto-Italic Roboto-Light Roboto-Black Roboto-Thin Roboto-MediumItalic",
             ".ttf"),
    *_family("fonts-roboto-unhinted", _ROBOTO, "condensed sans",
             "RobotoCondensed-Regular RobotoCondensed-Bold RobotoCondensed-LightItalic", ".ttf"),
    *_family("fonts-cantarell", "opentype/cantarell", "humanist sans",
             "Cantarell-Regular Cantarell-Bold Cantarell-Light Cantarell-Thin Cantarell-ExtraBold"),
    *_family("fonts-crosextra-carlito", "truetype/crosextra", "humanist sans",
             "Carlito-Regular Carlito-Bold Carlito-Italic Carlito-BoldItalic", ".ttf"),
    *_family("fonts-linuxlibertine", "opentype/linux-libertine", "humanist sans",
             "LinBiolinum_R LinBiolinum_RB LinBiolinum_RI"),
    *_family("fonts-linuxlibertine", "opentype/linux-libertine", "old-style serif",
             "LinLibertine_R LinLibertine_RB LinLibertine_RI LinLibertine_RBI"),
    *_family("fonts-league-spartan", "opentype/league-spartan", "geometric sans",
             "LeagueSpartan-Regular LeagueSpartan-Bold LeagueSpartan-Light LeagueSpartan-Black "
             "LeagueSpartan-ExtraLight LeagueSpartan-SemiBold"),
    *_family("fonts-karla", "truetype/karla", "grotesque sans",
             "Karla-Regular Karla-Bold Karla-Italic Karla-Light Karla-ExtraBold"),
    *_family("fonts-jura", "opentype/jura", "square sans", "Jura-Regular Jura-Bold Jura-Light"),
    *_family("fonts-inconsolata", "truetype/inconsolata", "mono", "Inconsolata"),
]

HELD_OUT = [
    *_family("fonts-urw-base35", _URW, "geometric sans",
             "URWGothic-Book URWGothic-Demi URWGothic-BookOblique URWGothic-DemiOblique"),
    *_family("fonts-comfortaa", "truetype/comfortaa", "rounded sans",
             "Comfortaa-Regular Comfortaa-Bold Comfortaa-Light", ".ttf"),
    *_family("fonts-quicksand", "truetype/quicksand", "rounded sans",
             "Quicksand-Regular Quicksand-Medium Quicksand-Bold", ".ttf"),
    *_family("fonts-open-sans", "truetype/open-sans", "humanist sans",
             "OpenSans-Regular OpenSans-Bold OpenSans-Italic OpenSans-ExtraBold", ".ttf"),
    *_family("fonts-open-sans", "truetype/open-sans", "condensed sans", "OpenSans-CondBold OpenSans-CondLight", ".ttf"),
    *_family("fonts-cabin", "opentype/cabin", "humanist sans", "Cabin-Regular Cabin-Bold Cabin-Italic"),
    *_family("fonts-go", "fonts-go", "humanist sans", "Go-Regular Go-Bold Go-Italic", ".ttf"),
    *_family("fonts-go", "fonts-go", "mono", "Go-Mono Go-Mono-Bold", ".ttf"),
    *_family("fonts-hack", "truetype/hack", "mono", "Hack-Regular Hack-Bold", ".ttf"),
    *_family("fonts-b612", "opentype/b612", "sans", "B612-Regular B612-Bold"),
    *_family("fonts-b612", "opentype/b612", "mono", "B612Mono-Regular"),
    *_family("fonts-roboto-slab", "opentype/roboto/slab", "slab serif",
             "RobotoSlab-Regular RobotoSlab-Bold RobotoSlab-Light"),
    *_family("fonts-crosextra-caladea", "truetype/crosextra", "serif",
             "Caladea-Regular Caladea-Bold Caladea-Italic Caladea-BoldItalic", ".ttf"),
    *_family("fonts-ebgaramond", "opentype/ebgaramond", "old-style serif",
             "EBGaramond12-Regular EBGaramond12-Bold EBGaramond12-Italic"),
]

HELD_OUT_RELATIVES = {"texgyreadventor": "TeX Gyre Adventor is derived from URW Gothic, a held-out face"}
"""File names (lower case) of faces related to a held-out face, which no training set may hold. Hack, held
out since the first weights, derives from DejaVu Sans Mono, which ``core`` has: kept, so that the held-out
figures stay comparable from one round of weights to the next."""


def _declared(table: Path) -> list[Face]:
    rows = [line.split("\t") for line in table.read_text().splitlines() if line and not line.startswith("#")]
    return [Face(file, package, kind) for package, kind, file in rows]


EXTENDED = TRAINING + _declared(Path(__file__).with_name("extended_faces.tsv"))

FONT_SETS: dict[str, list[Face]] = {"core": CORE, "training": TRAINING, "held-out": HELD_OUT, "extended": EXTENDED}
SETUP_SETS = ("core", "training", "held-out")
"""The sets ``make setup`` installs (the tests draw in them); ``make fonts`` installs ``extended``."""


class FontsMissingError(FileNotFoundError):
    """Declared faces whose files are not installed; the message names the packages to install."""


def missing(faces: Iterable[Face]) -> list[Face]:
    return [face for face in faces if not face.path.is_file()]


def packages(faces: Iterable[Face]) -> list[str]:
    return sorted({face.package for face in faces})


def font_files(name: str = "training") -> list[Path]:
    """The files of the declared set ``name``, in a fixed order, every one checked to be installed."""
    if name not in FONT_SETS:
        raise KeyError(f"no font set {name!r}; the sets are {', '.join(FONT_SETS)}")
    faces = FONT_SETS[name]
    absent = missing(faces)
    if absent:
        raise FontsMissingError(f"{len(absent)} of the {len(faces)} faces of the {name!r} font set are not installed "
                                f"(first: {absent[0].path}): {_remedy(name, absent)}")
    return [face.path for face in faces]


def _remedy(name: str, absent: list[Face]) -> str:
    if os.environ.get("STR_OCR_FONT_ROOT"):
        return (f"STR_OCR_FONT_ROOT names {FONT_ROOT}: fill it with `scripts/pack_faces.py {FONT_ROOT} --sets {name}` "
                "on a machine that has the faces, or unset it")
    command = "fonts" if name == "extended" else "setup"
    return f"run `make {command}`, or `apt-get install {' '.join(packages(absent))}`"


def by_kind(paths: Iterable[Path]) -> list[list[Path]]:
    """``paths`` grouped by their declared kind, in order of first appearance; a file no set declares
    is a kind of its own."""
    kinds = {face.path: face.kind for faces in FONT_SETS.values() for face in faces}
    groups: dict[str, list[Path]] = {}
    for path in paths:
        groups.setdefault(kinds.get(path, str(path)), []).append(path)
    return list(groups.values())


def main(argv: list[str]) -> int:
    """``missing-packages [SET ...]``: the packages of the sets' faces not installed, one a line."""
    sets = argv[1:] or list(SETUP_SETS)
    if argv[:1] != ["missing-packages"] or not set(sets) <= set(FONT_SETS):
        print(f"usage: fonts.py missing-packages [{' '.join(FONT_SETS)}]...", file=sys.stderr)
        return 2
    for package in packages(missing(face for name in sets for face in FONT_SETS[name])):
        print(package)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
