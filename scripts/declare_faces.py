"""Write the ``extended`` training faces (backend_src/str_ocr/extended_faces.tsv) from Debian's Latin font packages.

    make declare-faces   # installs CANDIDATES and RapidOCR's virtualenv, then runs this

A face of a candidate package is declared when it
- is not a face of the other sets, nor a relative of a held-out face (``fonts.HELD_OUT_RELATIVES``);
- maps every letter and digit, each to a glyph with ink, the glyphs distinct (a symbol font maps them too);
- draws the lines otherwise than every face of the other sets and every candidate before it (one design is one
  face, however many files ship it);
- is legible: RapidOCR's recogniser, which was not trained on these faces either, reads at least
  ``LEGIBLE`` of ``WORDS`` drawn in it (so that no line is labelled with text its face does not show);
and at most ``PER_PACKAGE`` faces of one package are kept, spread over its weights and styles (more of a
collection whose every face is a design of its own: ``COLLECTIONS``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont
from tqdm import tqdm

from str_ocr.fonts import FONT_ROOT, HELD_OUT, HELD_OUT_RELATIVES, TRAINING
from str_ocr.packed_faces import drawing
from str_ocr_bench.peer_lines import read_lines

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "backend_src/str_ocr/extended_faces.tsv"
CANDIDATES = {
    "sans": "fonts-inter fonts-lato fonts-manrope fonts-sora fonts-oxygen fonts-clear-sans fonts-croscore "
            "fonts-paratype fonts-adf-switzera fonts-adf-gillius fonts-adf-verana fonts-adf-universalis "
            "fonts-tuffy fonts-mplus fonts-opendyslexic fonts-tiresias fonts-karmilla fonts-junction "
            "fonts-play fonts-mph-2b-damase fonts-uralic fonts-dustin fonts-allerta",
    "serif": "fonts-texgyre fonts-lmodern fonts-cmu fonts-stix fonts-vollkorn fonts-adf-accanthis "
             "fonts-adf-baskervald fonts-adf-berenis fonts-adf-irianis fonts-adf-libris fonts-adf-romande "
             "fonts-adf-tribun fonts-adf-oldania fonts-adf-ikarius fonts-adf-mekanus fonts-arapey fonts-cardo "
             "fonts-fanwood fonts-oldstandard fonts-quattrocento fonts-century-catalogue fonts-goudybookletter "
             "fonts-lindenhill fonts-elstob fonts-johnsmith-induni fonts-linex fonts-babelstone-modern "
             "fonts-solide-mirage fonts-gotico-antiqua fonts-averia-serif-gwf fonts-junicode fonts-sil-gentiumplus "
             "fonts-sil-charis",
    "mono": "fonts-jetbrains-mono fonts-fantasque-sans fonts-league-mono fonts-courier-prime fonts-anonymous-pro "
            "fonts-firacode fonts-monoid fonts-mononoki fonts-hermit fonts-3270 fonts-monofur fonts-agave "
            "fonts-gnutypewriter",
    "geometric sans": "fonts-beteckna",
    "rounded sans": "fonts-eurofurence fonts-dosis fonts-averia-gwf fonts-averia-sans-gwf",
    "signage": "fonts-roadgeek fonts-routed-gothic fonts-national-park fonts-opendin fonts-apropal "
               "fonts-bajaderka fonts-okolaks fonts-millimetre fonts-ferrite-core fonts-radisnoir fonts-stick",
    "display": "fonts-aenigma fonts-bebas-neue fonts-yanone-kaffeesatz fonts-compagnon fonts-klaudia-berenika "
               "fonts-engadget fonts-staypuft fonts-summersby fonts-cherrybomb fonts-leckerli-one fonts-prociono",
    "handwriting-like": "fonts-comic-neue fonts-humor-sans fonts-dkg-handwriting fonts-femkeklaver fonts-breip "
                        "fonts-sjfonts fonts-tomsontalks fonts-lobster fonts-lobstertwo fonts-dancingscript "
                        "fonts-kristi fonts-isabella fonts-ecolier-court",
}
PER_PACKAGE = 8
COLLECTIONS = {"fonts-aenigma": 60}  # 465 display faces by one designer: a tenth of the set, not a quarter
WORDS = ["market", "Station", "OPEN", "2024", "quick", "Brown", "ab7391", "jumping", "Fixed", "zone"]
LEGIBLE = 7
CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def package_files(package: str) -> list[Path]:
    listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True).stdout.splitlines()
    fonts = [Path(p) for p in listed if p.startswith(f"{FONT_ROOT}/") and re.search(r"\.(ttf|otf)$", p, re.I)]
    return sorted({path.resolve(): path for path in sorted(fonts)}.values())  # a link and its file: one face


def glyph_mask(font: ImageFont.FreeTypeFont, character: str) -> bytes | None:
    left, top, right, bottom = font.getbbox(character)
    if right <= left or bottom <= top:
        return None
    image = Image.new("L", (right - left + 2, bottom - top + 2), 0)
    ImageDraw.Draw(image).text((1 - left, 1 - top), character, font=font, fill=255)
    mask = np.asarray(image.resize((16, 24))) > 96
    return mask.tobytes() if mask.sum() > 3 else None


def covers_alphabet(path: Path) -> bool:
    """Every letter (both cases) and digit mapped to a glyph with ink, at most two pairs alike (O and 0, l and 1)."""
    try:
        mapped = TTFont(path, fontNumber=0, lazy=True).getBestCmap() or {}
        font = ImageFont.truetype(str(path), 32)
    except Exception:  # a file Pillow or fontTools cannot read is no candidate
        return False
    if any(ord(c) not in mapped for c in CHARACTERS + CHARACTERS[:26].upper()):
        return False
    for characters in (CHARACTERS, CHARACTERS[:26].upper() + CHARACTERS[26:]):
        masks = [glyph_mask(font, c) for c in characters]
        if None in masks or len(set(masks)) < len(characters) - 2:
            return False
    return True


def distinct(candidates: list[tuple[str, str, Path]], taken: list[Path]) -> list[tuple[str, str, Path]]:
    """``candidates`` less each face that draws every line as a ``taken`` face or a candidate before it does
    (``packed_faces.drawing``: a face shipped twice, or under two names), which would otherwise be drawn twice as
    often as its package's others, or be a held-out face under another name."""
    seen = {drawing(path): path for path in tqdm(taken, desc="taken faces", unit="face")}
    kept = []
    for candidate in tqdm(candidates, desc="distinct", unit="face"):
        first = seen.setdefault(drawing(candidate[2]), candidate[2])
        if first == candidate[2]:
            kept.append(candidate)
        else:
            print(f"{candidate[2].name} draws as {first.name}: left out", file=sys.stderr)
    return kept


def legible(paths: list[Path]) -> list[bool]:
    """Whether RapidOCR reads at least LEGIBLE of WORDS drawn in each face (black on white, 40 px)."""
    images = {}
    for i, path in enumerate(paths):
        font = ImageFont.truetype(str(path), 40)
        for j, word in enumerate(WORDS):
            left, top, right, bottom = font.getbbox(word)
            image = Image.new("L", (right - left + 24, bottom - top + 16), 255)
            ImageDraw.Draw(image).text((12 - left, 8 - top), word, font=font, fill=0)
            images[i * len(WORDS) + j] = np.asarray(image)
    texts = read_lines("rapidocr", list(images.values())).texts
    return [sum(texts[i * len(WORDS) + j] == w.lower() for j, w in enumerate(WORDS)) >= LEGIBLE
            for i in range(len(paths))]


def spread(paths: list[Path], count: int) -> list[Path]:
    if len(paths) <= count:
        return paths
    return [paths[round(i * (len(paths) - 1) / (count - 1))] for i in range(count)]


def main() -> int:
    if sys.argv[1:] == ["--packages"]:  # what `make declare-faces` installs first
        print(" ".join(package for names in CANDIDATES.values() for package in names.split()))
        return 0
    taken = {face.path for face in TRAINING + HELD_OUT}
    candidates = []  # (package, kind, path)
    for kind, names in CANDIDATES.items():
        for package in names.split():
            for path in package_files(package):
                if path not in taken and not any(key in path.name.lower() for key in HELD_OUT_RELATIVES):
                    candidates.append((package, kind, path))
    mapping = [c for c in tqdm(candidates, desc="alphabet", unit="face") if covers_alphabet(c[2])]
    candidates = distinct(mapping, sorted(taken))
    print(f"{len(candidates)} faces map the alphabet, each drawn its own way; asking RapidOCR which are legible",
          file=sys.stderr)
    readable = [c for c, ok in zip(candidates, legible([c[2] for c in candidates])) if ok]
    declared = []
    for package in dict.fromkeys(p for p, _, _ in readable):
        faces = [c for c in readable if c[0] == package]
        kept = set(spread([c[2] for c in faces], COLLECTIONS.get(package, PER_PACKAGE)))
        declared += [c for c in faces if c[2] in kept]
    lines = [f"{package}\t{kind}\t{path.relative_to(FONT_ROOT)}" for package, kind, path in declared]
    OUTPUT.write_text("# package\tkind\tfile under /usr/share/fonts; written by scripts/declare_faces.py\n"
                      + "\n".join(lines) + "\n")
    print(f"declared {len(declared)} faces of {len({c[0] for c in declared})} packages in {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
