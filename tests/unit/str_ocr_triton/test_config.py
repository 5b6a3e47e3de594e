"""Reading the repositories' configs as Triton would: which file a variant name picks, and what it serves."""

from str_ocr.contract import (DETECTOR, OCR, OCR_PAGE, POSTPROCESS, PREPROCESS, RECOGNIZER, RECOGNIZER_ONNX,
                              SECOND_RECOGNIZER, SECOND_RECOGNIZER_PARAMETER)
from str_ocr_triton.config import (
    ONNX_REPOSITORY, backend_of, default_repository, ensemble_steps, read_configs, read_model_config,
    served_recognizers, served_second_weights, served_weights,
)


def test_the_default_repositories_are_the_source_trees():
    assert (default_repository() / RECOGNIZER / "config.pbtxt").is_file()
    assert (default_repository(ONNX_REPOSITORY) / RECOGNIZER_ONNX / "config.pbtxt").is_file()


def test_a_variant_name_picks_its_file_and_an_unknown_one_the_default():
    model_dir = default_repository() / RECOGNIZER
    assert read_model_config(model_dir, "no_batching").max_batch_size == 8
    assert read_model_config(model_dir, "no_such_variant") == read_model_config(model_dir)


def test_each_model_and_its_backend():
    configs = read_configs(default_repository())
    assert {name: backend_of(c) for name, c in configs.items()} == {
        OCR: "ensemble", PREPROCESS: "python", RECOGNIZER: "python", POSTPROCESS: "python", DETECTOR: "python",
        OCR_PAGE: "python", SECOND_RECOGNIZER: "python"}
    assert backend_of(read_configs(default_repository(), "onnxruntime")[DETECTOR]) == "onnxruntime"
    assert ensemble_steps(configs[OCR]) == [PREPROCESS, RECOGNIZER, POSTPROCESS]
    assert backend_of(read_configs(default_repository(ONNX_REPOSITORY))[RECOGNIZER_ONNX]) == "onnxruntime"


def test_the_served_weights_are_the_shipped_checkpoint():
    checkpoint, channels = served_weights()
    assert checkpoint == default_repository() / RECOGNIZER / "1" / "str_64ch.pth" and channels == 64


def test_ocr_page_needs_the_models_it_calls():
    configs = read_configs(default_repository())
    assert ensemble_steps(configs[OCR_PAGE]) == [DETECTOR, RECOGNIZER]


def test_ocr_postprocess_needs_the_second_recogniser_its_parameter_names():
    configs = read_configs(default_repository())
    assert ensemble_steps(configs[POSTPROCESS]) == [RECOGNIZER, SECOND_RECOGNIZER]
    configs[POSTPROCESS].parameters[SECOND_RECOGNIZER_PARAMETER].string_value = " "
    assert ensemble_steps(configs[POSTPROCESS]) == [RECOGNIZER]


def test_both_served_recognisers_are_listed_for_the_image_to_export_their_graphs():
    checkpoint, channels = served_weights()
    assert served_recognizers() == [(checkpoint, channels), (served_second_weights(), 64)]
