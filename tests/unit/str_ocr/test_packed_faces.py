"""The declared faces cut down for a training machine without the font packages: the same lines drawn from them,
the files that cannot be cut down copied whole, and ``STR_OCR_FONT_ROOT`` pointing the font sets at the folder."""

import os
import subprocess
import sys

import numpy as np
import pytest

from str_ocr import fonts, packed_faces
from str_ocr.fonts import font_files
from str_ocr.packed_faces import pack_faces
from str_ocr.synth import TextLineSynth, Variety

EVERY_VARIATION = Variety(light_on_dark=0.3, stretch=0.2, heavy=0.2, basic_layout=0.2, crops=0.4, old_style_figures=0.5,
                          old_style_faces=0.3)


@pytest.fixture(scope="module")
def held_out_packed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faces")
    return folder, pack_faces(font_files("held-out"), folder)


def test_cut_down_faces_draw_the_same_lines_in_less_room(held_out_packed):
    folder, packed = held_out_packed
    sources = font_files("held-out")
    copies = [folder / source.relative_to(fonts.FONT_ROOT) for source in sources]
    assert packed.faces == len(sources) and all(copy.is_file() for copy in copies)
    assert packed.size_bytes == sum(copy.stat().st_size for copy in copies)
    assert packed.size_bytes < sum(source.stat().st_size for source in sources) / 3
    installed, cut = (TextLineSynth(7, files, variety=EVERY_VARIATION) for files in (sources, copies))
    for width in (None, 100) * 60:
        first, second = installed.sample(width), cut.sample(width)
        assert first.text == second.text
        np.testing.assert_array_equal(first.image, second.image)


def test_a_face_that_cannot_be_cut_down_alike_is_copied_whole(tmp_path, monkeypatch):
    source = font_files("core")[0]

    def refuse(source, target):
        raise AssertionError("a table fontTools refuses")

    monkeypatch.setattr(packed_faces, "_subset", refuse)
    assert pack_faces([source], tmp_path).copied_whole == 1
    assert (tmp_path / source.relative_to(fonts.FONT_ROOT)).read_bytes() == source.read_bytes()

    monkeypatch.setattr(packed_faces, "_subset",
                        lambda source, target: target.write_bytes(font_files("core")[1].read_bytes()))
    assert not packed_faces.cut_down(source, tmp_path / "other.ttf")  # another face: it draws otherwise
    assert (tmp_path / "other.ttf").read_bytes() == source.read_bytes()


def test_one_design_under_two_names_has_one_drawing(tmp_path):
    source, other = font_files("core")[:2]
    renamed = tmp_path / "Renamed-Regular.ttf"
    renamed.write_bytes(source.read_bytes())
    assert packed_faces.drawing(renamed) == packed_faces.drawing(source) != packed_faces.drawing(other)


def test_the_font_root_comes_from_the_environment(held_out_packed):
    folder, _ = held_out_packed
    ask = "from str_ocr.fonts import FONT_ROOT, font_files; print(FONT_ROOT, len(font_files('held-out')))"
    environment = {**os.environ, "STR_OCR_FONT_ROOT": str(folder)}
    run = subprocess.run([sys.executable, "-c", ask], env=environment, capture_output=True, text=True, check=True)
    assert run.stdout.split() == [str(folder), str(len(fonts.HELD_OUT))]
    run = subprocess.run([sys.executable, "-c", ask.replace("held-out", "core")], env=environment,
                         capture_output=True, text=True)
    assert run.returncode != 0 and f"scripts/pack_faces.py {folder} --sets core" in run.stderr


def test_faces_are_not_packed_over_themselves(monkeypatch, tmp_path):
    monkeypatch.setattr(fonts, "FONT_ROOT", tmp_path)
    with pytest.raises(ValueError, match="another folder"):
        pack_faces([], tmp_path)
