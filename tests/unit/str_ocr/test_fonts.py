"""The declared font sets: what they name, that training and held-out faces never meet, and what a
machine without them is told."""

import pytest

from str_ocr import fonts


def files(faces):
    return {face.file for face in faces}


def test_training_and_held_out_faces_never_meet():
    assert not files(fonts.TRAINING) & files(fonts.HELD_OUT)
    assert not {face.path.name for face in fonts.TRAINING} & {face.path.name for face in fonts.HELD_OUT}


def test_the_extended_set_adds_hundreds_of_faces_none_held_out_nor_related():
    extended, held_out = fonts.EXTENDED, fonts.HELD_OUT
    assert extended[: len(fonts.TRAINING)] == fonts.TRAINING and len(files(extended)) == len(extended)
    assert len(extended) >= 3 * len(fonts.TRAINING) and len(fonts.packages(extended)) >= 50
    assert not files(extended) & files(held_out)
    family = {face.path.stem.split("-")[0].lower() for face in held_out}
    assert not {face.path.stem.split("-")[0].lower() for face in extended} & family
    names = " ".join(face.path.name.lower() for face in extended)
    assert not [relative for relative in fonts.HELD_OUT_RELATIVES if relative in names]
    kinds = {face.kind for face in extended}
    assert {"serif", "mono", "rounded sans", "signage", "display", "handwriting-like"} <= kinds


def test_the_core_faces_are_training_faces_and_come_first():
    assert fonts.TRAINING[: len(fonts.CORE)] == fonts.CORE
    assert len(files(fonts.TRAINING)) == len(fonts.TRAINING)  # no face twice


def test_held_out_faces_include_kinds_training_has_none_of():
    unseen = {face.kind for face in fonts.HELD_OUT} - {face.kind for face in fonts.TRAINING}
    assert {"rounded sans", "slab serif"} <= unseen


def test_the_sets_are_varied():
    for name in ("training", "held-out"):
        kinds = {face.kind for face in fonts.FONT_SETS[name]}
        assert {"serif", "mono", "humanist sans", "geometric sans", "condensed sans"} <= kinds
        stems = " ".join(face.path.stem for face in fonts.FONT_SETS[name])
        assert all(style in stems for style in ("Bold", "Italic", "Light"))


def test_faces_are_grouped_by_their_declared_kind():
    paths = [face.path for face in fonts.TRAINING]
    undeclared = fonts.FONT_ROOT / "undeclared.ttf"
    groups = fonts.by_kind([*paths, undeclared])
    assert sorted(path for group in groups for path in group) == sorted([*paths, undeclared])
    assert len(groups) == len({face.kind for face in fonts.TRAINING}) + 1 and groups[-1] == [undeclared]
    kind = {face.path: face.kind for face in fonts.TRAINING}
    assert all(len({kind[path] for path in group}) == 1 for group in groups[:-1])


@pytest.mark.parametrize("name", list(fonts.FONT_SETS))
def test_every_declared_face_is_installed(name):
    assert [path.is_file() for path in fonts.font_files(name)] == [True] * len(fonts.FONT_SETS[name])


def test_missing_faces_name_the_packages_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(fonts, "FONT_ROOT", tmp_path)
    with pytest.raises(fonts.FontsMissingError, match="make setup.*fonts-comfortaa.*fonts-urw-base35"):
        fonts.font_files("held-out")
    assert fonts.main(["missing-packages"]) == 0
    listed = capsys.readouterr().out.split()
    assert listed == sorted({face.package for name in fonts.SETUP_SETS for face in fonts.FONT_SETS[name]})
    assert fonts.main(["missing-packages", "extended"]) == 0
    assert set(capsys.readouterr().out.split()) == set(fonts.packages(fonts.EXTENDED))
    with pytest.raises(fonts.FontsMissingError, match="make fonts"):
        fonts.font_files("extended")


def test_nothing_is_missing_after_setup(capsys):
    assert fonts.main(["missing-packages", *fonts.FONT_SETS]) == 0
    assert capsys.readouterr().out.strip() == ""


def test_an_unknown_set_is_refused():
    with pytest.raises(KeyError, match="training, held-out"):
        fonts.font_files("everything")
