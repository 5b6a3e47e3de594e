"""Word accuracy and character error rate of the recogniser on synthetic lines no training run draws.

Three groups of sets, each drawn from a seed that training never uses:

- ``current``: the sets the first weights were measured on: the ``core`` faces (DejaVu, Liberation,
  FreeFont), either polarity (a quarter light on dark), the tutorial's fixed 32x100 input with 1 to 12
  characters, and variable-width lines (height 32, ``LINE_STRETCH`` times as wide as their aspect ratio) with
  1 to 25;
- ``training``: the training faces, and ``held-out``: faces training never sees; each at fixed 32x100
  (1 to 10 characters) and variable width (1 to 25), dark on light and light on dark separately.

With ``--peers``, the recognisers users would pick instead read the same lines in the same run and are
scored the same way (lower-cased, 0-9a-z): the variable-width lines 32 pixels high at their own aspect ratio
(the project reads them ``LINE_STRETCH`` times as wide, and again those it is unsure of, as served: see
``--read-again-below``), the fixed sets' lines as drawn, at full resolution,
since squashing them to 32x100 suits only a reader built for it.
Then the project also reads on one thread, as the peers do, so that the times per line compare.

With ``--against``, other weights read the same lines too, and each set reports the difference in word accuracy,
in points, line by line, with its 95 % interval: separate draws of 1,000 lines differ by about a point by chance
alone, too much to see whether new weights read a set a few tenths worse than the shipped ones.

``scripts/evaluate.py`` is its command line.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .benchmark import time_engine
from .checkpoint import CheckpointMismatchError, checkpoint_width, load_model
from .contract import LINE_STRETCH, READ_AGAIN_BELOW, READ_AGAIN_KEEPS, TUTORIAL_WIDTH, UNSTRETCHED
from .engines import ENGINES, PRECISIONS, Engine, build_engine, choose_engine
from .fonts import FONT_SETS, font_files
from .metrics import Scores, confusions, look_alike_accuracy, paired_difference, score
from .model import STRModel
from .plotting import pyplot
from .preprocess import LineLimits
from .read_again import (KEEPS, READ_AGAIN_STEP, SERVED_KEEP, LineReader, ReadingKept, read_again_threshold,
                         read_again_where_unsure)
from .recognizer import Recognizer
from .synth import CASES, MAX_CHARS, TEXT_KINDS, Sample, TextLineSynth, Variety, unshaped_warning
from .text import Reading

DEFAULT_SEED = 20_261_122
NO_SECOND = "none"
"""``--second-checkpoint none``: read without second weights, even the shipped weights."""
GROUPS = ("current", "training", "held-out")
FIXED_CHARS = 10
"""Longest string of the fixed 32x100 sets of the training and held-out faces: past 10 characters
a line squeezed into 100 pixels is read less well by any reader (see ``synth.FIXED_MAX_CHARS``)."""
LENGTH_BUCKETS = [(1, 5), (6, 10), (11, 15), (16, 20), (21, 25)]
VARIABLE_WIDTH = "variable width"
"""What the names of the sets of variable-width lines say after their group."""
WIDTHS = {"fixed 32x100": (TUTORIAL_WIDTH, FIXED_CHARS), VARIABLE_WIDTH: (None, MAX_CHARS)}
POLARITIES = {"dark on light": 0.0, "light on dark": 1.0}
CONFUSIONS_SHOWN = 8
"""Character edits (``metrics.edits``) reported per set, most frequent first."""

ServedReader = Callable[[str, list, str], list[Reading]]
"""``read(url, images, model)``: the readings of ``images`` by the served ``model`` at ``url``."""
PeerReader = Callable[[str, list], tuple[list[str], float]]
"""``read(peer, images)``: ``peer``'s readings of ``images`` (lower case, 0-9a-z) and the seconds they took."""


def draw_group(group: str, seed: int, count: int, keep_source: bool = False,
               line_stretch: float = LINE_STRETCH) -> dict[str, list[Sample]]:
    """The named sets of ``group`` (one of ``GROUPS``), ``count`` lines each; ``keep_source``: with each line
    as drawn (``Sample.source``), for the peers; ``line_stretch``: ``TextLineSynth``'s."""
    if group == "current":  # drawn exactly as the first weights were measured: one generator, fixed lines first
        synth = TextLineSynth(seed, "core", keep_source=keep_source, line_stretch=line_stretch)
        return {
            "current: fixed 32x100": [synth.sample(TUTORIAL_WIDTH) for _ in range(count)],
            f"current: {VARIABLE_WIDTH}": [synth.sample() for _ in range(count)],
        }
    sets = {}
    for i, (width_name, (width, max_chars)) in enumerate(WIDTHS.items()):
        for j, (polarity, share) in enumerate(POLARITIES.items()):
            synth = TextLineSynth(seed + 2 * i + j + 1, group, variety=Variety(light_on_dark=share),
                                  keep_source=keep_source, line_stretch=line_stretch)
            sets[f"{group}: {width_name}, {polarity}"] = [synth.sample(width, max_chars) for _ in range(count)]
    return sets


def _as_dict(scores: Scores) -> dict:
    return {"lines": scores.lines, "word_accuracy": scores.word_accuracy, "cer": scores.cer}


def _scored(texts: list[str], truths: list[str]) -> tuple[Scores, dict]:
    """The scores of ``texts``, and as a dict with the word accuracy when look-alikes count as one."""
    scores = score(texts, truths)
    return scores, {**_as_dict(scores), "look_alike_word_accuracy": look_alike_accuracy(texts, truths)}


def _with_look_alikes(scores: Scores, scores_dict: dict) -> str:
    return f"{scores}; {scores_dict['look_alike_word_accuracy']:.2%} with 0/o and 1/i/l taken as one"


def report(name: str, samples: list[Sample], readings: list[Reading], examples: int) -> dict:
    texts, truths = [r.text for r in readings], [s.text for s in samples]
    overall, overall_dict = _scored(texts, truths)
    print(f"{name}: {_with_look_alikes(overall, overall_dict)}")
    by_length = {}
    for low, high in LENGTH_BUCKETS:
        picked = [i for i, t in enumerate(truths) if low <= len(t) <= high]
        if picked:
            bucket = score([texts[i] for i in picked], [truths[i] for i in picked])
            by_length[f"{low}-{high}"] = _as_dict(bucket)
            print(f"  {low:2}-{high:<2} characters: {bucket}")
    shown = [{"truth": s.text, "read": r, "face": face_name(s)} for s, r in misread(samples, texts)[:examples]]
    for mistake in shown:
        print(f"  mistake: {mistake['truth']!r} read as {mistake['read']!r} ({mistake['face']})")
    return {**overall_dict, "by_length": by_length, "mistakes": shown,
            "confusions": most_often_misread(texts, truths, "most often misread")}


def most_often_misread(texts: Sequence[str], truths: Sequence[str], label: str) -> list[dict]:
    """The characters most often read as others, missed or added, printed after ``label`` and returned."""
    most_often = confusions(texts, truths).most_common(CONFUSIONS_SHOWN)
    if most_often:
        # "0>o 31": a 0 read as o 31 times; "-" for nothing, a character missed or added
        print(f"  {label}: " + ", ".join(f"{t or '-'}>{r or '-'} {n}" for (t, r), n in most_often))
    return [{"truth": t, "read": r, "count": n} for (t, r), n in most_often]


def kind_scores(samples: list[Sample], texts: list[str]) -> dict[str, dict]:
    """``texts`` scored apart for each kind of text (``synth.TEXT_KINDS``) and each case (``synth.CASES``) among
    ``samples``: which lines a set's mistakes come from, and whether look-alikes explain them."""
    rows = {}
    for label, attribute in [*((kind, "kind") for kind in TEXT_KINDS), *((case, "case") for case in CASES)]:
        picked = [i for i, sample in enumerate(samples) if getattr(sample, attribute) == label]
        if picked:
            rows[label] = _scored([texts[i] for i in picked], [samples[i].text for i in picked])[1]
    return rows


def _print_kinds(name: str, rows: dict[str, dict]) -> None:
    print(f"  {name} by kind and case: " + ", ".join(
        f"{label} {row['word_accuracy']:.1%} ({row['look_alike_word_accuracy']:.1%}, {row['lines']})"
        for label, row in rows.items()))


PEER_NAMES_SHOWN = {"rapidocr": "RapidOCR (PP-OCRv4)", "easyocr": "EasyOCR (english_g2)"}
PEER_LINE_STRETCH = UNSTRETCHED
"""The peers read variable-width lines as a user would send them."""


def peers_read(sets: dict[str, dict]) -> list[str]:
    """The peers that read the sets beside the project (every set has the same), in the order they ran."""
    return list(next(iter(sets.values())).get("peers", {})) if sets else []


def reader_names(peers: Sequence[str]) -> list[str]:
    """The names the tables and pictures give the project and each of ``peers``, in that order."""
    return ["this project", *(PEER_NAMES_SHOWN.get(p, p) for p in peers)]


def table(sets: dict[str, dict], seconds_per_line: dict[str, float] | None = None) -> str:
    """The results as the README's Markdown table: word accuracy and character error rate of the project and,
    where they were run, of each peer; then the time per line of each."""
    peers = peers_read(sets)
    names = reader_names(peers)
    rows = ["| set | " + " | ".join(f"{n}: word accuracy (CER)" for n in names) + " |",
            "| --- |" + " --- |" * len(names)]
    for name, r in sets.items():
        cells = [r, *(r["peers"][p] for p in peers)]
        rows.append(f"| {name} | " + " | ".join(f"{c['word_accuracy']:.1%} ({c['cer']:.2%})" for c in cells) + " |")
    if seconds_per_line:
        rows.append("| time per line, one thread | " + " | ".join(f"{seconds_per_line[k] * 1000:.1f} ms"
                                                          for k in ["project", *peers]) + " |")
    return "\n".join(rows)


def plot_word_accuracy(sets: dict[str, dict], picture: Path) -> None:
    """Each set's word accuracy as bars, the project's beside each peer's where they read the same lines."""
    plt = pyplot()

    peers = peers_read(sets)
    per_reader = [[r["word_accuracy"] for r in sets.values()],
                  *([r["peers"][p]["word_accuracy"] for r in sets.values()] for p in peers)]
    readers = list(zip(reader_names(peers), per_reader))
    height = 0.8 / len(readers)
    figure, axes = plt.subplots(figsize=(9, 1 + 0.2 * len(sets) * len(readers)))
    for i, (label, accuracies) in enumerate(readers):  # the first set at the top, the project first in each
        rows = [len(sets) - 1 - k + ((len(readers) - 1) / 2 - i) * height for k in range(len(sets))]
        bars = axes.barh(rows, [100 * a for a in accuracies], height=height, label=label)
        axes.bar_label(bars, fmt="%.1f", fontsize=7, padding=2)
    axes.set_yticks(range(len(sets)), list(sets)[::-1], fontsize=8)
    lowest = min(min(a) for _, a in readers)
    axes.set(xlim=(max(0.0, 100 * lowest - 10), 101), xlabel="word accuracy (%), lines read exactly")
    axes.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(readers), fontsize=8, frameon=False)
    figure.tight_layout()
    figure.savefig(picture, dpi=100)
    plt.close(figure)


def misread(samples: list[Sample], texts: list[str]) -> list[tuple[Sample, str]]:
    """Each line of ``samples`` whose reading in ``texts`` is not its text, with that reading."""
    return [(sample, text) for sample, text in zip(samples, texts) if sample.text != text]


def face_name(sample: Sample) -> str | None:
    """The name of the face ``sample`` is drawn in (its font file's, without the suffix)."""
    return sample.face.stem if sample.face else None


def file_name(set_name: str) -> str:
    """``set_name`` as a file name: "held-out: fixed 32x100, dark on light" -> "held-out-fixed-32x100-dark-on-light"."""
    return re.sub(r"[^a-z0-9]+", "-", set_name.lower()).strip("-")


def draw_mistakes(name: str, samples: list[Sample], texts: list[str], count: int, picture: Path) -> None:
    """The first ``count`` lines of ``samples`` that ``texts`` misread, as the recogniser saw them, one under another
    at one scale, each titled with its text, the reading, its case and its face: what a set's mistakes look like.
    Without a mistake, no picture (and none left from an earlier run)."""
    shown = misread(samples, texts)[:count]
    if not shown:
        picture.unlink(missing_ok=True)
        return
    plt = pyplot()
    widest = max(sample.image.shape[1] for sample, _ in shown)
    figure, rows = plt.subplots(len(shown), 1, squeeze=False, figsize=(2 + widest / 50, 0.9 * len(shown) + 0.5))
    for axes, (sample, text) in zip(rows[:, 0], shown):
        axes.imshow(sample.image, cmap="gray", vmin=0, vmax=255)
        axes.set_xlim(-0.5, widest - 0.5)
        axes.set_anchor("W")
        title = [f"{sample.text}  read as  {text or '(nothing)'}", sample.case, face_name(sample)]
        axes.set_title("  ·  ".join(part for part in title if part), loc="left", fontsize=9, family="monospace")
        axes.axis("off")
    figure.suptitle(f"{name}: the first {len(shown)} lines misread", x=0.01, ha="left", fontsize=10)
    figure.tight_layout()
    figure.savefig(picture, dpi=100)
    plt.close(figure)


def kind_table(sets: dict[str, dict]) -> str:
    """``--by-kind``'s Markdown table: the word accuracy of each kind and case of line (with look-alikes as one),
    each set's two polarities pooled, for the project and each peer run beside it."""
    peers = peers_read(sets)
    names = reader_names(peers)
    pooled: dict[tuple[str, str], list[list[float]]] = {}
    for name, r in sets.items():
        readers = [r["by_kind"], *(r["peers"][p]["by_kind"] for p in peers)]
        for label in r["by_kind"]:
            cells = pooled.setdefault((name.split(", ")[0], label), [[0.0, 0.0, 0.0] for _ in readers])
            for cell, rows in zip(cells, readers):
                row = rows[label]
                cell[0] += row["lines"]
                cell[1] += row["lines"] * row["word_accuracy"]
                cell[2] += row["lines"] * row["look_alike_word_accuracy"]
    lines = ["| set (polarities pooled) | kind or case | lines | " + " | ".join(
        f"{n}: word accuracy (look-alikes as one)" for n in names) + " |"]
    lines.append("| --- | --- | --- |" + " --- |" * len(names))
    for (name, label), cells in pooled.items():
        lines.append(f"| {name} | {label} | {cells[0][0]:.0f} | " + " | ".join(
            f"{c[1] / c[0]:.1%} ({c[2] / c[0]:.1%})" for c in cells) + " |")
    return "\n".join(lines)


FACE_SEED_OFFSET = 100
FACES_SHOWN = 10


def face_scores(group: str, seed: int, count: int, read: Callable[[list], list[Reading]],
                line_stretch: float = LINE_STRETCH) -> list[dict]:
    """Each face of ``group``'s font set read on its own: ``count`` variable-width lines, dark on light, worst
    first. Which faces a set's mistakes come from, and whether only look-alikes explain them."""
    font_set = "core" if group == "current" else group
    rows = []
    for i, (face, path) in enumerate(zip(FONT_SETS[font_set], font_files(font_set))):
        synth = TextLineSynth(seed + FACE_SEED_OFFSET + i, [path], variety=Variety(light_on_dark=0.0),
                              line_stretch=line_stretch)
        samples = [synth.sample() for _ in range(count)]
        texts, truths = [r.text for r in read([s.image for s in samples])], [s.text for s in samples]
        _, scores = _scored(texts, truths)
        rows.append({"face": Path(face.file).stem, "kind": face.kind, "package": face.package, **scores})
    return sorted(rows, key=lambda row: (row["word_accuracy"], row["face"]))


def print_faces(group: str, rows: list[dict]) -> None:
    print(f"{group}: the {min(FACES_SHOWN, len(rows))} faces read worst of {len(rows)} "
          f"(word accuracy; with look-alikes as one)")
    for row in rows[:FACES_SHOWN]:
        print(f"  {row['word_accuracy']:6.1%} {row['look_alike_word_accuracy']:6.1%}  {row['face']} ({row['kind']})")


def peer_image(name: str, sample: Sample) -> np.ndarray:
    """What a peer reads of a line: the fixed sets' lines as drawn, the others 32 pixels high."""
    if "fixed" not in name:
        return sample.image
    if sample.source is None:  # squashed to 32x100, the line would read worse than a user's copy of it
        raise ValueError(f"{name}: the peers read fixed lines as drawn: draw them with keep_source")
    return sample.source


def score_peers(sets: dict[str, list[Sample]], peers: Sequence[str], read_peer: PeerReader,
                results: dict, *, by_kind: bool = False) -> dict[str, float]:
    """Each peer's scores on every set, added to ``results["sets"]`` (``by_kind``: also each kind and case of line
    apart); the seconds per line each took."""
    images = [peer_image(name, s) for name, samples in sets.items() for s in samples]
    seconds = {}
    for peer in peers:
        texts, total = read_peer(peer, images)
        seconds[peer] = total / len(images)
        start = 0
        for name, samples in sets.items():
            read = texts[start:start + len(samples)]
            scores, scores_dict = _scored(read, [s.text for s in samples])
            results["sets"][name].setdefault("peers", {})[peer] = scores_dict
            print(f"{name}, {peer}: {_with_look_alikes(scores, scores_dict)}")
            if by_kind:
                scores_dict["by_kind"] = kind_scores(samples, read)
                _print_kinds(peer, scores_dict["by_kind"])
            start += len(samples)
    return seconds


def peer_names(text: str) -> list[str]:
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in PEER_NAMES_SHOWN]
    if unknown:
        raise argparse.ArgumentTypeError(f"no peer {', '.join(unknown)}; the peers are {', '.join(PEER_NAMES_SHOWN)}")
    return names


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for add_arguments in (_add_line_arguments, _add_reader_arguments, _add_comparison_arguments, _add_output_arguments):
        add_arguments(parser)
    args = parser.parse_args(argv)
    _default_against_to_own(args)
    if problem := _argument_problem(args):
        parser.error(problem)
    return args


def _add_line_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("lines read")
    group.add_argument("--sets", nargs="+", choices=GROUPS, default=list(GROUPS), help="default: all")
    group.add_argument("--count", type=int, default=1000, help="lines per set (default: %(default)s)")
    group.add_argument("--seed", type=int, default=DEFAULT_SEED,
                       help="draws the lines: the same seed, the same lines (default: %(default)s, the README's)")
    group.add_argument("--line-stretch", type=float, default=LINE_STRETCH, metavar="S",
                       help="draw variable-width lines S times as wide as their aspect ratio (default: %(default)s, "
                            "as served)")


def _add_reader_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("reader")
    group.add_argument("--checkpoint", type=Path,
                       help="weights (default: what text_recognition's config.pbtxt serves)")
    group.add_argument("--url", help="read through the served model at this gRPC address instead of in-process")
    group.add_argument("--model", default="text_recognition",
                       help="served model name, with --url (default: %(default)s)")
    group.add_argument("--engine", default="torch", choices=ENGINES, help="in-process engine (default: %(default)s)")
    group.add_argument("--precision", default="f32", choices=PRECISIONS,
                       help="bf16: with --engine openvino (default: %(default)s)")
    group.add_argument("--read-again-below", type=float, default=READ_AGAIN_BELOW, metavar="C",
                       help="read each variable-width line again where its confidence is below C, "
                            f"{READ_AGAIN_STEP:g} times narrower and wider than it was drawn (--line-stretch; "
                            "--against-line-stretch for the --against weights), keeping the reading --keep "
                            "names (str_ocr.read_again; default: %(default)s, as served; 0 reads each line once)")
    group.add_argument("--second-checkpoint", metavar="CHECKPOINT",
                       help="other weights that read the variable-width lines read again as well, as drawn and at "
                            "the other stretches, their readings counted as the others (with --read-again-below "
                            "above 0; with --peers, the time per line counts their readings too). Default, without "
                            "--checkpoint and --url: the weights ocr_postprocess's second_recognizer serves, as the "
                            "served ocr reads; 'none': no second weights")
    group.add_argument("--keep", choices=[option_name(name) for name in KEEPS],
                       default=option_name(READ_AGAIN_KEEPS),
                       help="which reading a line read again keeps: the text its readings again agree on most, or "
                            "the most confident (str_ocr.read_again.KEEPS; default: %(default)s, as served)")
    group.add_argument("--first-weights-again", action=argparse.BooleanOptionalAction, default=True,
                       help="with second weights, whether the evaluated weights read the unsure lines again too "
                            "(default: %(default)s); there must be second weights to leave it out")


def _add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("compared with")
    group.add_argument("--peers", default="", type=peer_names,
                       help="comma-separated: rapidocr, easyocr (installed by make peers)")
    group.add_argument("--against", type=Path, metavar="CHECKPOINT",
                       help="other weights that read the same lines in-process: each set's difference, line by line")
    group.add_argument("--against-line-stretch", type=float, metavar="S",
                       help="the --against weights read the same lines drawn at this stretch "
                            "(default: --line-stretch)")
    group.add_argument("--against-read-again-below", type=float, metavar="C",
                       help="the --against weights read lines again below this confidence (default: "
                            "--read-again-below)")
    group.add_argument("--against-keep", choices=[option_name(name) for name in KEEPS],
                       help="which reading a line the --against weights read again keeps (default: --keep)")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--examples", type=int, default=3, help="mistakes to show per set (default: %(default)s)")
    group.add_argument("--mistakes", type=Path, metavar="DIR",
                       help="draw each set's first --examples mistakes (the line as read, its text, the reading and "
                            "its face) into DIR, one picture a set")
    group.add_argument("--by-face", type=int, default=0, metavar="N",
                       help="also read N variable-width lines in each face of the --sets on its own")
    group.add_argument("--by-kind", action="store_true",
                       help="also score each kind of text (word-like, random characters, codes, digits) and each case "
                            "apart, for the project and the peers")
    group.add_argument("--speed", action="store_true", help="also time the model alone at batch 1 and 8")
    group.add_argument("--json", type=Path, help="write the results here, and their word accuracy drawn beside (.png)")


def _default_against_to_own(args: argparse.Namespace) -> None:
    """The --against weights read as the evaluated ones do, where their own flags are left out."""
    if args.against_line_stretch is None:
        args.against_line_stretch = args.line_stretch
    if args.against_read_again_below is None:
        args.against_read_again_below = args.read_again_below
    args.against_keep = args.against_keep or args.keep


def _argument_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with a combination of flags, said so that the user knows what to change; None if nothing."""
    stretches = (("--line-stretch", args.line_stretch), ("--against-line-stretch", args.against_line_stretch))
    for option, stretch in stretches:
        try:
            LineLimits(stretch=stretch)
        except ValueError as error:
            return f"{option}: {error}"
    try:
        for option, below in (("--read-again-below", args.read_again_below),
                              ("--against-read-again-below", args.against_read_again_below)):
            read_again_threshold(below, option)
    except ValueError as error:
        return str(error)
    given_second = args.second_checkpoint not in (None, NO_SECOND)
    if given_second and args.url:
        return "--second-checkpoint reads the lines read again in-process: leave out --url"
    if given_second and not args.read_again_below:
        return "--second-checkpoint reads the lines read again: give --read-again-below above 0"
    if args.against and args.count < 2:
        return f"--against compares at least 2 lines a set, got --count {args.count}"
    return None


def drawn_sets(args: argparse.Namespace, line_stretch: float, keep_source: bool = False) -> dict[str, list[Sample]]:
    """Every set of ``args.sets``, ``args.count`` lines each from ``args.seed``, drawn at ``line_stretch``."""
    return {name: samples for group in args.sets
            for name, samples in draw_group(group, args.seed, args.count, keep_source, line_stretch).items()}


def redrawn(args: argparse.Namespace, sets: dict[str, list[Sample]], line_stretch: float,
            keep_source: bool = False) -> dict[str, list[Sample]]:
    """``sets`` (drawn at ``args.line_stretch``) drawn again at ``line_stretch``: the same texts, faces and effects,
    only the noise differs."""
    if line_stretch == args.line_stretch:
        return sets
    again = drawn_sets(args, line_stretch, keep_source)
    for name, samples in sets.items():
        if [s.text for s in again[name]] != [s.text for s in samples]:
            raise RuntimeError(f"{name}: the lines drawn at stretches {args.line_stretch:g} and {line_stretch:g} "
                               "say different texts")
    return again


def read_lines(images: list[np.ndarray], read: LineReader, below: float, line_stretch: float,
               variable_width: bool, second: LineReader | None = None,
               keep: ReadingKept = SERVED_KEEP, first_weights_again: bool = True) -> tuple[list[Reading], int | None]:
    """The readings of a set's lines (drawn at ``line_stretch``), and how many were read again: each variable-width
    line less sure than ``below`` is read again, by ``second`` too where given (by it alone, not
    ``first_weights_again``), and keeps the reading ``keep`` keeps (None where no line could be)."""
    if not below or not variable_width:
        return read(images), None
    return read_again_where_unsure(images, read, below, limits=LineLimits(stretch=line_stretch), second=second,
                                   keep=keep, first_weights_again=first_weights_again)


def option_name(name: str) -> str:
    """How a command line names ``name`` (``most_agreed``: ``most-agreed``)."""
    return name.replace("_", "-")


def keep_named(option: str) -> ReadingKept:
    """The way of keeping a reading that ``--keep`` or ``--against-keep`` names."""
    return KEEPS[option.replace("-", "_")]


def name_is_variable_width(name: str) -> bool:
    """Whether set ``name`` (as ``draw_group`` names its sets) holds variable-width lines."""
    return name.split(": ", 1)[1].startswith(VARIABLE_WIDTH)


def compared(samples: list[Sample], evaluated: list[Reading], against: list[Reading]) -> dict:
    """The ``--against`` weights' word accuracy on ``samples`` and the characters they misread most often, and the
    evaluated weights' difference to them, line by line."""
    truths, against_texts = [s.text for s in samples], [r.text for r in against]
    difference = paired_difference([r.text for r in evaluated], against_texts, truths)
    print(f"  evaluated less --against: {_points(difference.difference, difference.margin)}: {difference.only_first} "
          f"lines read only by the evaluated weights, {difference.only_second} only by --against's")
    return {"word_accuracy": score(against_texts, truths).word_accuracy, "difference": difference.difference,
            "margin": difference.margin, "only_evaluated": difference.only_first,
            "only_against": difference.only_second,
            "confusions": most_often_misread(against_texts, truths, "--against's most often misread")}


def print_worst_difference(sets: dict[str, dict], against: Path) -> None:
    name, worst = min(((name, r["against"]) for name, r in sets.items()), key=lambda item: item[1]["difference"])
    print(f"against {against}: the set read least well by comparison is {name}, "
          f"{_points(worst['difference'], worst['margin'])}")


def _points(difference: float, margin: float) -> str:
    return f"{difference * 100:+.2f} points (95 % interval +-{margin * 100:.2f})"


def _in_process_engine(model: STRModel, args: argparse.Namespace, device: torch.device) -> Engine:
    return build_engine(model, choose_engine(args.engine, device), device, torch.get_num_threads(), args.precision)


def _recogniser(checkpoint: Path | None,
                shipped_weights: Callable[[], tuple[Path | None, int]] | None) -> tuple[Path | None, STRModel]:
    """``checkpoint`` and its recogniser, as wide as the file says; without one, the weights ``shipped_weights()``
    names."""
    try:
        if checkpoint is not None:
            return checkpoint, load_model(checkpoint, checkpoint_width(checkpoint))
        if shipped_weights is None:
            raise SystemExit("evaluate: --checkpoint is needed (scripts/evaluate.py defaults to the shipped weights)")
        checkpoint, channels = shipped_weights()
        return checkpoint, load_model(checkpoint, channels)
    except CheckpointMismatchError as error:
        raise SystemExit(f"evaluate: {error}") from None


def _other_recogniser(checkpoint: Path, args: argparse.Namespace,
                      device: torch.device) -> tuple[Path, Recognizer]:
    """Other weights than the evaluated (``--against``, ``--second-checkpoint``) and their in-process reader."""
    checkpoint, model = _recogniser(checkpoint, None)
    return checkpoint, Recognizer(_in_process_engine(model, args, device), max_lines=256)


def _second_checkpoint(args: argparse.Namespace,
                       shipped_second_weights: Callable[[], Path | None] | None) -> Path | None:
    """The second weights to read with: ``--second-checkpoint``'s; where it is not given, the served ones
    (``shipped_second_weights()``) when the shipped weights are read in-process and lines are read again."""
    if args.second_checkpoint == NO_SECOND:
        return None
    if args.second_checkpoint is not None:
        return Path(args.second_checkpoint)
    shipped = args.checkpoint is None and not args.url and args.read_again_below and shipped_second_weights
    return shipped_second_weights() if shipped else None


def _check_usage(args: argparse.Namespace, read_served: ServedReader | None, read_peer: PeerReader | None) -> None:
    if args.peers and read_peer is None:
        raise SystemExit("evaluate: --peers needs their readers (scripts/evaluate.py has them)")
    if args.peers and args.url:
        raise SystemExit("evaluate: --peers compares in-process readers: leave out --url")
    if args.url and read_served is None:
        raise SystemExit("evaluate: --url needs a client (scripts/evaluate.py has one)")
    if not args.first_weights_again and not args.second_checkpoint:
        raise SystemExit("evaluate: --no-first-weights-again leaves the lines read again to second weights, and none "
                         "read here: give --second-checkpoint, or leave out the option")


def _header(args: argparse.Namespace, model: STRModel, device: torch.device) -> dict:
    """Says what is evaluated, and where; the results with the fields that say so, and no set yet."""
    where = (f"served by {args.url} ({args.model})" if args.url
             else f"in-process on {device.type}, {args.engine} {args.precision}")
    stretches = f", lines stretched {args.line_stretch:g}x" if args.line_stretch != LINE_STRETCH else ""
    print(f"evaluating {args.checkpoint} ({model.output_channels} channels) {where}, seed {args.seed}{stretches}")
    if warning := unshaped_warning():
        print(f"evaluate: {warning}")
    return {"checkpoint": str(args.checkpoint), "where": where, "seed": args.seed,
            "line_stretch": args.line_stretch, "read_again_below": args.read_again_below,
            "keep": args.keep, "first_weights_again": args.first_weights_again, "sets": {}}


@dataclass(frozen=True)
class _Readers:
    """How the evaluated weights read a set's lines (``read``: in-process or served, ``second``: second weights for
    the lines read again; ``keep``: the reading such a line keeps), and the ``--against`` weights beside them."""

    args: argparse.Namespace
    read: LineReader
    second: LineReader | None
    keep: ReadingKept
    against: Recognizer | None
    against_keep: ReadingKept

    def read_set(self, images: list[np.ndarray], variable_width: bool) -> tuple[list[Reading], int | None]:
        args = self.args
        return read_lines(images, self.read, args.read_again_below, args.line_stretch, variable_width, self.second,
                          self.keep, args.first_weights_again)

    def read_against(self, images: list[np.ndarray], variable_width: bool) -> list[Reading]:
        args = self.args
        return read_lines(images, self.against.read, args.against_read_again_below, args.against_line_stretch,
                          variable_width, keep=self.against_keep)[0]


def _readers(args: argparse.Namespace, engine: Engine | None, device: torch.device,
             read_served: ServedReader | None, results: dict) -> _Readers:
    """The readers ``args`` ask for; the other weights' files go into ``results``."""
    recognizer = Recognizer(engine, max_lines=256) if engine else None

    def read(images: list) -> list[Reading]:
        return read_served(args.url, images, args.model) if args.url else recognizer.read(images)

    second = against = None
    if args.second_checkpoint:
        args.second_checkpoint, second_recognizer = _other_recogniser(args.second_checkpoint, args, device)
        second = second_recognizer.read
        results["second_checkpoint"] = str(args.second_checkpoint)
        print(f"  the lines read again are read by {args.second_checkpoint} as well")
    if args.against:
        args.against, against = _other_recogniser(args.against, args, device)
        results.update(against=str(args.against), against_line_stretch=args.against_line_stretch,
                       against_read_again_below=args.against_read_again_below, against_keep=args.against_keep)
    return _Readers(args, read, second, keep_named(args.keep), against, keep_named(args.against_keep))


def _set_report(args: argparse.Namespace, name: str, samples: list[Sample], readings: list[Reading],
                read_again: int | None) -> dict:
    """``report``'s figures of one set, and what the options add: the lines read again, the mistakes drawn, the
    kinds of text apart."""
    result = report(name, samples, readings, args.examples)
    if read_again is not None:
        result["read_again"] = read_again
        print(f"  read again where the confidence was below {args.read_again_below:g}: {read_again} lines")
    texts = [r.text for r in readings]
    if args.mistakes:
        draw_mistakes(name, samples, texts, args.examples, args.mistakes / f"{file_name(name)}.png")
    if args.by_kind:
        result["by_kind"] = kind_scores(samples, texts)
        _print_kinds("this project", result["by_kind"])
    return result


def _read_sets(args: argparse.Namespace, sets: dict[str, list[Sample]], against_sets: dict[str, list[Sample]],
               readers: _Readers, results: dict) -> float:
    """Each of ``sets`` read and reported into ``results`` (beside the ``--against`` weights' reading of the same
    lines in ``against_sets``); the seconds the evaluated weights read for."""
    if args.mistakes:
        args.mistakes.mkdir(parents=True, exist_ok=True)
    reading_seconds = 0.0
    for name, samples in sets.items():
        variable_width = name_is_variable_width(name)
        start = time.perf_counter()
        readings, read_again = readers.read_set([s.image for s in samples], variable_width)
        reading_seconds += time.perf_counter() - start
        results["sets"][name] = _set_report(args, name, samples, readings, read_again)
        if readers.against:
            theirs = readers.read_against([s.image for s in against_sets[name]], variable_width)
            results["sets"][name]["against"] = compared(samples, readings, theirs)
    return reading_seconds


def _peers_seconds_per_line(args: argparse.Namespace, sets: dict[str, list[Sample]],
                            peer_sets: dict[str, list[Sample]], reading_seconds: float, read_peer: PeerReader,
                            results: dict) -> dict[str, float]:
    """The peers scored on ``peer_sets`` into ``results``; each reader's seconds per line, the project's first."""
    lines = sum(len(samples) for samples in sets.values())
    seconds_per_line = {"project": reading_seconds / lines,
                        **score_peers(peer_sets, args.peers, read_peer, results, by_kind=args.by_kind)}
    results["seconds_per_line"] = seconds_per_line
    return seconds_per_line


def _print_tables(args: argparse.Namespace, results: dict, seconds_per_line: dict[str, float] | None) -> None:
    print(table(results["sets"], seconds_per_line))
    if args.by_kind:
        print(kind_table(results["sets"]))
    if args.against:
        print_worst_difference(results["sets"], args.against)


def _by_face(args: argparse.Namespace, readers: _Readers) -> dict[str, list[dict]]:
    """``--by-face``: each face of ``args.sets``' groups read on its own, worst first, printed."""
    def read_variable_width(images: list) -> list[Reading]:
        return readers.read_set(images, variable_width=True)[0]

    faces = {group: face_scores(group, args.seed, args.by_face, read_variable_width, args.line_stretch)
             for group in args.sets}
    for group, rows in faces.items():
        print_faces(group, rows)
    return faces


def _speed(args: argparse.Namespace, model: STRModel, engine: Engine) -> dict:
    """``--speed``: the model's size, and its images per second in-process at batch 1 and 8, printed."""
    parameters = sum(p.numel() for p in model.parameters())
    speed = {f"batch_{b}": time_engine(engine, b).images_per_second for b in (1, 8)}
    file_bytes = Path(args.checkpoint).stat().st_size
    print(f"{parameters:,} parameters, {file_bytes / 1e6:.1f} MB; in-process on the CPU "
          f"({torch.get_num_threads()} threads): {speed['batch_1']:.0f} img/s at batch 1, "
          f"{speed['batch_8']:.0f} at batch 8")
    return {"parameters": parameters, "file_bytes": file_bytes, "cpu_images_per_second": speed}


def main(argv: Sequence[str] | None = None, shipped_weights: Callable[[], tuple[Path | None, int]] | None = None,
         read_served: ServedReader | None = None, read_peer: PeerReader | None = None,
         shipped_second_weights: Callable[[], Path | None] | None = None) -> dict:
    """The evaluation; without ``--checkpoint``, of the weights ``shipped_weights()`` names, with the second weights
    ``shipped_second_weights()`` names; with ``--url``, read through ``read_served``; with ``--peers``, beside
    ``read_peer``'s. ``scripts/evaluate.py`` gives all four."""
    args = parse_args(argv)
    args.second_checkpoint = _second_checkpoint(args, shipped_second_weights)
    _check_usage(args, read_served, read_peer)
    if args.peers:
        torch.set_num_threads(1)
    args.checkpoint, model = _recogniser(args.checkpoint, shipped_weights)
    device = torch.device("cuda" if torch.cuda.is_available() and args.engine == "torch" else "cpu")
    results = _header(args, model, device)
    engine = _in_process_engine(model, args, device) if not args.url or args.speed else None
    readers = _readers(args, engine, device, read_served, results)
    # Sample.source for the peers' fixed lines: held in this draw only where the peers read it, not a redraw
    sets = drawn_sets(args, args.line_stretch, keep_source=bool(args.peers) and args.line_stretch == PEER_LINE_STRETCH)
    against_sets = redrawn(args, sets, args.against_line_stretch) if readers.against else sets
    peer_sets = redrawn(args, sets, PEER_LINE_STRETCH, keep_source=True) if args.peers else sets
    if args.peers:  # the first reads pay for allocations, in the project's process as in the peers'
        readers.read([s.image for s in next(iter(sets.values()))[:16]])
    reading_seconds = _read_sets(args, sets, against_sets, readers, results)
    seconds_per_line = (_peers_seconds_per_line(args, sets, peer_sets, reading_seconds, read_peer, results)
                        if args.peers else None)
    _print_tables(args, results, seconds_per_line)
    if args.by_face:
        results["faces"] = _by_face(args, readers)
    if args.speed:
        results.update(_speed(args, model, engine))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        plot_word_accuracy(results["sets"], args.json.with_suffix(".png"))
    return results
