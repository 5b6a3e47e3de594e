"""Which models the launcher loads, and why it skips the others (no server needed)."""

import shutil

from str_ocr_server.repository import default_repository, plan_models

DEFAULT_REPOSITORY = default_repository()

PYTHON_ONLY = {"python", "ensemble"}


def test_the_local_server_skips_the_onnx_model_with_a_reason():
    models, skipped = plan_models(DEFAULT_REPOSITORY, None, PYTHON_ONLY)
    assert set(models) == {"text_recognition", "ocr", "ocr_preprocess", "ocr_postprocess"}
    assert "no 'onnxruntime' backend" in skipped["text_recognition_onnx"]


def test_asking_for_an_ensemble_loads_its_steps():
    models, skipped = plan_models(DEFAULT_REPOSITORY, "dynamic_batching", PYTHON_ONLY, ["ocr"])
    assert models[0] == "ocr" and set(models) == {"ocr", "ocr_preprocess", "text_recognition", "ocr_postprocess"}
    assert skipped == {}


def test_an_onnx_model_without_its_file_and_an_ensemble_without_a_step(tmp_path):
    repository = tmp_path / "repo"
    shutil.copytree(DEFAULT_REPOSITORY, repository, ignore=shutil.ignore_patterns("*.onnx", "*.pth"))
    shutil.rmtree(repository / "ocr_postprocess")
    models, skipped = plan_models(repository, None, PYTHON_ONLY | {"onnxruntime"})
    assert "no version folder holds model.onnx (make it with scripts/export_onnx.py)" in skipped["text_recognition_onnx"]
    assert "its step(s) ocr_postprocess cannot be loaded" in skipped["ocr"]
    assert "ocr" not in models and "text_recognition" in models
