"""Which models the launcher loads, and why it skips the others (no server needed)."""

import shutil

import pytest

from str_ocr_server.repository import plan_models
from str_ocr_triton.config import ONNX_REPOSITORY, default_repository

DEFAULT_REPOSITORY = default_repository()

PYTHON_ONLY = {"python", "ensemble"}


@pytest.fixture
def with_onnx(tmp_path):
    """The repository and the ONNX model in one folder, as a server given both would see them."""
    repository = tmp_path / "repo"
    shutil.copytree(DEFAULT_REPOSITORY, repository, ignore=shutil.ignore_patterns("*.onnx", "*.pth"))
    shutil.copytree(default_repository(ONNX_REPOSITORY), repository, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.onnx"))
    return repository


LINE_MODELS = ("text_recognition", "text_recognition_second", "ocr", "ocr_preprocess", "ocr_postprocess")


def test_the_local_server_loads_the_whole_default_repository():
    models, skipped = plan_models(DEFAULT_REPOSITORY, None, PYTHON_ONLY)
    assert set(models) == {*LINE_MODELS, "text_detection", "ocr_page"} and skipped == {}


def test_the_local_server_skips_the_onnx_model_with_a_reason(with_onnx):
    models, skipped = plan_models(with_onnx, None, PYTHON_ONLY)
    assert set(models) == {*LINE_MODELS, "text_detection", "ocr_page"}
    assert "no 'onnxruntime' backend" in skipped["text_recognition_onnx"]


def test_asking_for_ocr_page_loads_the_models_it_calls():
    models, skipped = plan_models(DEFAULT_REPOSITORY, None, PYTHON_ONLY, ["ocr_page"])
    assert models == ["ocr_page", "text_detection", "text_recognition"] and skipped == {}


def test_ocr_page_is_skipped_with_its_detector_where_that_needs_a_missing_backend():
    models, skipped = plan_models(DEFAULT_REPOSITORY, "onnxruntime", PYTHON_ONLY)
    assert "text_detection" not in models and "ocr_page" not in models and set(LINE_MODELS) <= set(models)
    assert "no 'onnxruntime' backend" in skipped["text_detection"] and "text_detection" in skipped["ocr_page"]


def test_asking_for_an_ensemble_loads_its_steps():
    models, skipped = plan_models(DEFAULT_REPOSITORY, "dynamic_batching", PYTHON_ONLY, ["ocr"])
    assert models[0] == "ocr" and set(models) == set(LINE_MODELS)  # the second recogniser ocr_postprocess calls too
    assert skipped == {}


def test_ocr_is_skipped_where_the_second_recogniser_its_postprocess_step_calls_is_missing(tmp_path):
    repository = tmp_path / "repo"
    shutil.copytree(DEFAULT_REPOSITORY, repository, ignore=shutil.ignore_patterns("*.pth", "*.onnx"))
    shutil.rmtree(repository / "text_recognition_second")
    models, skipped = plan_models(repository, None, PYTHON_ONLY)
    assert "its step(s) text_recognition_second cannot be loaded" in skipped["ocr_postprocess"]
    assert "ocr_postprocess" in skipped["ocr"] and "text_recognition" in models


def test_an_onnx_model_without_its_file_and_an_ensemble_without_a_step(with_onnx):
    shutil.rmtree(with_onnx / "ocr_postprocess")
    models, skipped = plan_models(with_onnx, None, PYTHON_ONLY | {"onnxruntime"})
    assert ("no version folder holds model.onnx (make it with scripts/export_onnx.py)"
            in skipped["text_recognition_onnx"])
    assert "its step(s) ocr_postprocess cannot be loaded" in skipped["ocr"]
    assert "ocr" not in models and "text_recognition" in models
