"""The evaluation sets: which faces, widths and polarities each draws, and the report it ends with."""

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from str_ocr import STRModel, evaluate, save_checkpoint
from str_ocr.evaluate import (CONFUSIONS_SHOWN, FIXED_CHARS, PEER_LINE_STRETCH, draw_group, draw_mistakes, file_name,
                              kind_table, main, name_is_variable_width, peer_image, plot_word_accuracy, table)
from str_ocr.contract import LINE_STRETCH, MIN_WIDTH, READ_AGAIN_BELOW, SECOND_RECOGNIZER
from str_ocr.fonts import FONT_SETS
from str_ocr.read_again import read_again_stretches, read_again_where_unsure
from str_ocr.synth import CASES, TEXT_KINDS, Sample
from str_ocr.text import Reading
from str_ocr_triton.config import default_repository, served_second_weights, served_weights


def test_the_training_and_held_out_groups_draw_four_sets_each():
    for group in ("training", "held-out"):
        sets = draw_group(group, seed=3, count=6)
        assert list(sets) == [f"{group}: {w}, {p}" for w in ("fixed 32x100", "variable width")
                              for p in ("dark on light", "light on dark")]
        fixed = sets[f"{group}: fixed 32x100, dark on light"] + sets[f"{group}: fixed 32x100, light on dark"]
        assert all(s.image.shape == (32, 100) and 1 <= len(s.text) <= FIXED_CHARS for s in fixed)


def test_a_polarity_set_is_all_of_that_polarity():
    sets = draw_group("held-out", seed=5, count=20)
    # Light text on a dark ground: the brightest pixels are few, so the median sits below the middle.
    darker = [np.median(s.image) < s.image.mean() + 1 for s in sets["held-out: variable width, light on dark"]]
    lighter = [np.median(s.image) > s.image.mean() - 1 for s in sets["held-out: variable width, dark on light"]]
    assert sum(darker) >= 18 and sum(lighter) >= 18


def test_the_current_group_is_drawn_in_the_core_faces():
    sets = draw_group("current", seed=1, count=4)
    assert list(sets) == ["current: fixed 32x100", "current: variable width"]
    assert FONT_SETS["core"] == FONT_SETS["training"][: len(FONT_SETS["core"])]


def test_main_reports_every_set_and_ends_with_the_table(tmp_path, capsys):
    torch.manual_seed(0)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    results = main(["--checkpoint", str(tmp_path / "w.pth"), "--count", "3",
                    "--sets", "current", "held-out", "--json", str(tmp_path / "r.json")])
    assert len(results["sets"]) == 6 and (tmp_path / "r.json").is_file()
    assert (tmp_path / "r.png").read_bytes().startswith(b"\x89PNG")  # the sets' word accuracy, drawn
    assert all(0 <= r["word_accuracy"] <= r["look_alike_word_accuracy"] <= 1 and r["lines"] == 3
               for r in results["sets"].values())
    printed = capsys.readouterr().out
    assert "| held-out: variable width, light on dark |" in printed
    assert printed.count("most often misread: ") == 6  # untrained weights misread every set
    for r in results["sets"].values():
        counts = [c["count"] for c in r["confusions"]]
        assert 0 < len(counts) <= CONFUSIONS_SHOWN and counts == sorted(counts, reverse=True) and counts[-1] > 0


@pytest.fixture
def threads():
    """main runs on one thread beside the peers, as they do: the other tests get theirs back."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.fixture
def untrained(tmp_path) -> str:
    """A small recogniser's checkpoint, for tests of what the peers are given."""
    torch.manual_seed(0)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    return str(tmp_path / "w.pth")


class PeerReadingNothing:
    """A peer that reads every line as nothing in ``seconds``, and keeps what it was given."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds, self.seen = seconds, []

    def __call__(self, peer: str, images: list) -> tuple[list[str], float]:
        self.seen.append(images)
        return [""] * len(images), self.seconds


@pytest.mark.parametrize("line_stretch", ["1.2", "1.0"])  # the peers' lines redrawn, or this draw's own
def test_peers_are_scored_on_the_same_lines_and_read_fixed_lines_as_drawn(untrained, threads, line_stretch):
    peer_reader = PeerReadingNothing(seconds=0.5)
    results = main(["--checkpoint", untrained, "--count", "4", "--sets", "current", "--line-stretch", line_stretch,
                    "--peers", "rapidocr"], read_peer=peer_reader)
    (images,) = peer_reader.seen
    assert len(images) == 8 and not any(image.shape == (32, 100) for image in images[:4])
    assert results["seconds_per_line"]["rapidocr"] == pytest.approx(0.5 / 8)
    peer = {name: r["peers"]["rapidocr"] for name, r in results["sets"].items()}
    assert peer["current: fixed 32x100"]["lines"] == 4 and peer["current: fixed 32x100"]["cer"] == 1.0
    assert peer["current: fixed 32x100"]["look_alike_word_accuracy"] == 0
    assert "RapidOCR" in table(results["sets"], results["seconds_per_line"]).splitlines()[0]


def test_a_peer_is_never_given_a_fixed_line_squashed_to_32x100():
    squashed = np.zeros((32, 100), np.uint8)
    assert peer_image("held-out: variable width, dark on light", Sample(squashed, "a")) is squashed
    with pytest.raises(ValueError, match="keep_source"):
        peer_image("held-out: fixed 32x100, dark on light", Sample(squashed, "a"))


def test_peers_read_variable_width_lines_at_their_own_aspect_ratio(untrained, threads):
    peer_reader = PeerReadingNothing()
    main(["--checkpoint", untrained, "--count", "4", "--seed", "5", "--sets", "current", "--line-stretch", "1.5",
          "--peers", "rapidocr"], read_peer=peer_reader)
    (images,) = peer_reader.seen
    variable = "current: variable width"
    natural = draw_group("current", 5, 4, line_stretch=PEER_LINE_STRETCH)[variable]
    assert [image.shape for image in images[4:]] == [s.image.shape for s in natural]


def test_by_kind_scores_each_kind_and_case_apart_for_the_project_and_the_peers(tmp_path, threads, capsys):
    shipped, _ = served_weights()

    def reads_digits_only(peer, images):
        return ["7"] * len(images), 0.1

    results = main(["--checkpoint", str(shipped), "--count", "60", "--sets", "held-out", "--examples", "0",
                    "--by-kind", "--peers", "easyocr"], read_peer=reads_digits_only)
    for r in results["sets"].values():
        for reader in (r["by_kind"], r["peers"]["easyocr"]["by_kind"]):
            assert sum(reader[k]["lines"] for k in TEXT_KINDS) == sum(reader[c]["lines"] for c in CASES) == 60
        assert r["peers"]["easyocr"]["by_kind"]["word-like"]["word_accuracy"] == 0  # "7" is no word
        assert r["by_kind"]["word-like"]["word_accuracy"] > 0.5
    rows = kind_table(results["sets"]).splitlines()
    assert "EasyOCR" in rows[0] and len(rows) == 2 + 2 * (len(TEXT_KINDS) + len(CASES))  # two widths, polarities pooled
    assert "| held-out: variable width | word-like | " in capsys.readouterr().out


def test_peers_need_their_readers():
    with pytest.raises(SystemExit, match="--peers needs"):
        main(["--checkpoint", "x.pth", "--peers", "easyocr"])


def test_by_face_reads_every_face_of_the_set_worst_first(tmp_path, capsys):
    torch.manual_seed(0)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    results = main(["--checkpoint", str(tmp_path / "w.pth"), "--count", "1", "--sets", "held-out", "--by-face", "2"])
    rows = results["faces"]["held-out"]
    assert len(rows) == len(FONT_SETS["held-out"]) and all(row["lines"] == 2 for row in rows)
    assert [row["word_accuracy"] for row in rows] == sorted(row["word_accuracy"] for row in rows)
    out = capsys.readouterr().out
    assert f"held-out: the 10 faces read worst of {len(rows)}" in out
    assert "(16 channels)" in out  # the width read from the checkpoint, none given


def test_mistakes_are_drawn_one_picture_a_set_and_named_with_their_faces(tmp_path):
    torch.manual_seed(0)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "w.pth")
    results = main(["--checkpoint", str(tmp_path / "w.pth"), "--count", "3", "--sets", "held-out", "--examples", "2",
                    "--mistakes", str(tmp_path / "mistakes")])
    pictures = sorted(p.name for p in (tmp_path / "mistakes").iterdir())
    assert pictures == sorted(f"{file_name(name)}.png" for name in results["sets"])  # untrained: every set misread
    stems = {face.path.stem for face in FONT_SETS["held-out"]}
    assert all(len(r["mistakes"]) == 2 and {m["face"] for m in r["mistakes"]} <= stems
               for r in results["sets"].values())


def test_a_mistake_picture_grows_with_the_lines_misread_and_is_not_drawn_without_one(tmp_path):
    samples = draw_group("held-out", seed=2, count=3)["held-out: variable width, dark on light"]
    wrong = ["?" for _ in samples]
    draw_mistakes("held-out", samples, wrong, 1, tmp_path / "one.png")
    draw_mistakes("held-out", samples, wrong, 3, tmp_path / "three.png")
    draw_mistakes("held-out", samples, [s.text for s in samples], 3, tmp_path / "none.png")
    assert Image.open(tmp_path / "three.png").height > Image.open(tmp_path / "one.png").height
    assert not (tmp_path / "none.png").exists()
    (tmp_path / "one.png").write_bytes(b"an earlier run's")
    draw_mistakes("held-out", samples, [s.text for s in samples], 3, tmp_path / "one.png")
    assert not (tmp_path / "one.png").exists()  # no picture left to be taken for this run's


def test_a_set_name_becomes_a_file_name_of_letters_digits_and_dashes():
    assert file_name("held-out: fixed 32x100, dark on light") == "held-out-fixed-32x100-dark-on-light"
    assert file_name("current: variable width") == "current-variable-width"


def test_a_file_that_is_no_recogniser_is_a_usage_error(tmp_path):
    torch.save({"weight": torch.zeros(2)}, tmp_path / "other.pth")
    with pytest.raises(SystemExit, match=r"evaluate: .*other.pth has no Prediction.weight"):
        main(["--checkpoint", str(tmp_path / "other.pth"), "--count", "1", "--sets", "current"])


def test_against_compares_other_weights_on_the_same_lines(tmp_path, capsys):
    torch.manual_seed(0)
    save_checkpoint(STRModel(output_channels=16), tmp_path / "untrained.pth")
    shipped, _ = served_weights()
    results = main(["--checkpoint", str(shipped), "--against", str(tmp_path / "untrained.pth"), "--count", "5",
                    "--sets", "current", "--examples", "0"])
    assert results["against"] == str(tmp_path / "untrained.pth")
    for r in results["sets"].values():
        compared = r["against"]
        # Untrained weights read no line exactly: every line the shipped weights read counts for them alone.
        assert compared["word_accuracy"] == 0 and compared["only_against"] == 0
        assert compared["only_evaluated"] == round(r["word_accuracy"] * 5) > 0
        assert compared["difference"] == pytest.approx(r["word_accuracy"])
        assert sum(c["count"] for c in compared["confusions"]) > sum(c["count"] for c in r["confusions"])
    out = capsys.readouterr().out
    assert "the set read least well by comparison is current: " in out and "--against's most often misread: " in out


def test_weights_against_themselves_read_every_line_alike():
    shipped, _ = served_weights()
    results = main(["--checkpoint", str(shipped), "--against", str(shipped), "--count", "40",
                    "--sets", "held-out", "--examples", "0"])
    # Some lines are misread, and each the same way by both: the other weights read the very same lines, and read
    # the unsure ones again as the evaluated weights do.
    assert results["against_read_again_below"] == results["read_again_below"] == READ_AGAIN_BELOW
    assert min(r["word_accuracy"] for r in results["sets"].values()) < 1
    assert all(r["against"]["only_evaluated"] == r["against"]["only_against"] == 0 == r["against"]["margin"]
               for r in results["sets"].values())
    assert all(r["against"]["confusions"] == r["confusions"] for r in results["sets"].values())
    assert any(r["confusions"] for r in results["sets"].values())


def test_against_reads_again_as_the_evaluated_weights_do_unless_told_otherwise():
    shipped, _ = served_weights()
    results = main(["--checkpoint", str(shipped), "--against", str(shipped), "--count", "60", "--sets", "held-out",
                    "--examples", "0", "--against-read-again-below", "0"])
    assert (results["read_again_below"], results["against_read_again_below"]) == (READ_AGAIN_BELOW, 0)
    variable = [r for name, r in results["sets"].items() if name_is_variable_width(name)]
    assert all(r["read_again"] > 0 for r in variable)  # the evaluated weights read unsure lines again, theirs not
    assert any(r["against"]["only_evaluated"] + r["against"]["only_against"] > 0 for r in variable)


def test_against_reads_the_same_texts_drawn_at_its_own_line_stretch():
    shipped, _ = served_weights()
    results = main(["--checkpoint", str(shipped), "--against", str(shipped), "--count", "12", "--sets", "current",
                    "--examples", "0", "--line-stretch", "1.3", "--against-line-stretch", "1.0"])
    assert (results["line_stretch"], results["against_line_stretch"]) == (1.3, 1.0)
    fixed, variable = (results["sets"][f"current: {width}"] for width in ("fixed 32x100", "variable width"))
    # Fixed lines are drawn 100 wide at any stretch: the same weights read them alike.
    assert fixed["against"]["only_evaluated"] == fixed["against"]["only_against"] == 0
    assert variable["against"]["word_accuracy"] + variable["against"]["difference"] == pytest.approx(
        variable["word_accuracy"])


def test_second_weights_read_the_variable_width_lines_read_again_and_not_the_fixed_ones(untrained):
    shipped, _ = served_weights()
    alone = main(["--checkpoint", untrained, "--count", "12", "--sets", "current", "--examples", "0"])
    paired = main(["--checkpoint", untrained, "--second-checkpoint", str(shipped), "--count", "12", "--sets",
                   "current", "--examples", "0"])
    assert paired["second_checkpoint"] == str(shipped)
    fixed, variable = (f"current: {width}" for width in ("fixed 32x100", "variable width"))
    # The untrained weights are unsure of every line: the shipped ones read the variable-width lines, once read again.
    assert paired["sets"][fixed]["word_accuracy"] == alone["sets"][fixed]["word_accuracy"]
    assert paired["sets"][variable]["read_again"] == 12
    assert paired["sets"][variable]["word_accuracy"] > alone["sets"][variable]["word_accuracy"] + 0.5


@pytest.mark.parametrize(("options", "second"), [([], "served"), (["--second-checkpoint", "none"], None),
                                                 (["--read-again-below", "0"], None),
                                                 (["--checkpoint", "given"], None)])
def test_the_shipped_weights_read_with_the_served_second_weights_unless_told_otherwise(untrained, options, second):
    shipped, _ = served_weights()
    options = [untrained if option == "given" else option for option in options]
    results = main(["--count", "2", "--sets", "current", "--examples", "0", *options],
                   shipped_weights=lambda: (Path(untrained), 16), shipped_second_weights=lambda: shipped)
    assert results.get("second_checkpoint") == (str(shipped) if second else None)


def test_the_served_second_weights_are_the_ones_ocr_postprocess_names():
    second = served_second_weights()
    assert second == default_repository() / SECOND_RECOGNIZER / "1" / "str_64ch.pth" and second != served_weights()[0]


@pytest.mark.parametrize(("options", "says"), [(["--read-again-below", "0"], "give --read-again-below above 0"),
                                               (["--url", "localhost:1"], "in-process: leave out --url")])
def test_second_weights_need_lines_read_again_in_process(options, says, capsys):
    with pytest.raises(SystemExit):
        main(["--checkpoint", "x.pth", "--second-checkpoint", "y.pth", *options])
    assert says in capsys.readouterr().err


def test_a_line_stretch_is_a_width_factor():
    with pytest.raises(SystemExit):
        main(["--checkpoint", "x.pth", "--line-stretch", "0"])


def test_against_needs_two_lines_a_set():
    with pytest.raises(SystemExit):
        main(["--checkpoint", "x.pth", "--against", "y.pth", "--count", "1"])


def test_the_picture_draws_each_peer_beside_the_project(tmp_path):
    peers = {"rapidocr": {"word_accuracy": 0.8}, "easyocr": {"word_accuracy": 0.7}}
    sets = {name: {"word_accuracy": 0.9, "peers": peers}
            for name in ("current: fixed 32x100", "held-out: variable width, dark on light")}
    plot_word_accuracy(sets, tmp_path / "r.png")
    alone = {name: {"word_accuracy": r["word_accuracy"]} for name, r in sets.items()}
    plot_word_accuracy(alone, tmp_path / "alone.png")
    # Three readers' bars make a taller picture than the project's alone.
    assert Image.open(tmp_path / "r.png").height > Image.open(tmp_path / "alone.png").height


class ServedUnsure:
    """A served model that reads every line as nothing, unsure, and keeps the widths of each request's lines."""

    def __init__(self) -> None:
        self.widths: list[list[int]] = []

    def __call__(self, url: str, images: list, model: str) -> list[Reading]:
        self.widths.append([image.shape[1] for image in images])
        return [Reading("", 0.5)] * len(images)


def test_read_again_reads_the_unsure_variable_width_lines_again_resampled_to_each_stretch(untrained):
    served = ServedUnsure()
    results = main(["--checkpoint", untrained, "--url", "localhost:1", "--count", "6", "--sets", "current",
                    "--examples", "0", "--read-again-below", "0.7"], read_served=served)
    fixed, variable = (results["sets"][f"current: {width}"] for width in ("fixed 32x100", "variable width"))
    assert results["read_again_below"] == 0.7 and variable["read_again"] == 6 and "read_again" not in fixed
    # The fixed lines once, then the variable-width ones, then all of them again at each stretch in one call.
    fixed_widths, served_widths, again = served.widths
    assert fixed_widths == [100] * 6
    assert again == [max(MIN_WIDTH, round(w * stretch / LINE_STRETCH))
                     for stretch in read_again_stretches(LINE_STRETCH) for w in served_widths]


def test_by_face_reads_unsure_lines_again_too(untrained):
    served = ServedUnsure()
    main(["--checkpoint", untrained, "--url", "localhost:1", "--count", "1", "--sets", "current", "--examples", "0",
          "--by-face", "1", "--read-again-below", "0.7"], read_served=served)
    faces = len(FONT_SETS["core"])
    # The fixed set read once; the variable-width set and each face's line read, then again at two stretches.
    assert len(served.widths) == 1 + 2 + 2 * faces


@pytest.mark.parametrize("option", ["--read-again-below", "--against-read-again-below"])
@pytest.mark.parametrize("below", ["-0.5", "1.5", "nan"])
def test_read_again_below_is_a_confidence(option, below, capsys):
    with pytest.raises(SystemExit):
        main(["--checkpoint", "x.pth", option, below])
    assert f"{option} must be a confidence from 0 (never) to 1" in capsys.readouterr().err


def test_keep_names_the_way_a_line_read_again_keeps_a_reading_the_against_weights_as_told(untrained, capsys):
    options = ["--checkpoint", untrained, "--against", untrained, "--count", "2", "--sets", "current",
               "--examples", "0"]
    results = main([*options, "--keep", "most-confident"])
    assert results["keep"] == results["against_keep"] == "most-confident"
    assert results["sets"]["current: variable width"]["read_again"] == 2
    results = main([*options, "--against-keep", "most-confident"])
    assert (results["keep"], results["against_keep"]) == ("most-agreed", "most-confident")
    with pytest.raises(SystemExit):
        main(["--checkpoint", untrained, "--keep", "loudest"])
    assert "invalid choice: 'loudest'" in capsys.readouterr().err


def test_first_weights_again_says_whether_the_evaluated_weights_read_again_beside_the_second(untrained, monkeypatch):
    told = []

    def reading_again(*args, first_weights_again, **kwargs):
        told.append(first_weights_again)
        return read_again_where_unsure(*args, first_weights_again=first_weights_again, **kwargs)

    monkeypatch.setattr(evaluate, "read_again_where_unsure", reading_again)
    options = ["--checkpoint", untrained, "--second-checkpoint", untrained, "--count", "2", "--sets", "current",
               "--examples", "0"]
    assert main(options)["first_weights_again"] is True and told == [True]
    results = main([*options, "--no-first-weights-again"])
    assert results["first_weights_again"] is False and told == [True, False]
    assert results["sets"]["current: variable width"]["read_again"] == 2  # the second weights read them
    with pytest.raises(SystemExit, match="--no-first-weights-again leaves the lines read again to second weights"):
        main([*options[:2], "--second-checkpoint", "none", *options[4:], "--no-first-weights-again"])
