"""Every configuration in the repository passes Triton's schema and our consistency checks; broken copies fail."""

import re
import shutil

import pytest

from str_ocr.contract import OCR_PAGE, POSTPROCESS, READ_AGAIN_BELOW, READ_AGAIN_KEEPS
from str_ocr.settings import page_settings, postprocess_settings
from str_ocr_triton.config import ONNX_REPOSITORY, default_repository, read_model_config
from str_ocr_triton.validation import validate

DEFAULT_REPOSITORY = default_repository()
ONNX_MODELS = default_repository(ONNX_REPOSITORY)

ENSEMBLE = """
name: "lines_to_logits"
platform: "ensemble"
max_batch_size: 8
input [ { name: "LINES", data_type: TYPE_FP32, dims: [ 1, 32, -1 ] } ]
output [ { name: "LOGITS", data_type: TYPE_FP32, dims: [ -1, 37 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "text_recognition"
      model_version: -1
      input_map { key: "input.1", value: "LINES" }
      output_map { key: "308", value: "LOGITS" }
    }
  ]
}
"""


def copy_of(source, tmp_path):
    copy = tmp_path / source.name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.onnx", "__pycache__"))
    return copy


@pytest.fixture
def repository(tmp_path):
    return copy_of(DEFAULT_REPOSITORY, tmp_path)


@pytest.fixture
def onnx_repository(tmp_path):
    return copy_of(ONNX_MODELS, tmp_path)


def add_ensemble(repository, text=ENSEMBLE):
    (repository / "lines_to_logits" / "1").mkdir(parents=True)
    (repository / "lines_to_logits" / "config.pbtxt").write_text(text)


@pytest.mark.parametrize("source", [DEFAULT_REPOSITORY, ONNX_MODELS], ids=lambda p: p.name)
def test_the_repository_is_valid(source):
    assert validate(source) == []


def test_every_model_and_variant_is_checked(repository, onnx_repository):
    variants = sorted(p.relative_to(repository).as_posix() for p in repository.glob("*/configs/*.pbtxt"))
    assert "text_recognition/configs/ragged_batching.pbtxt" in variants
    onnx_variants = sorted(p.relative_to(onnx_repository).as_posix() for p in onnx_repository.glob("*/configs/*.pbtxt"))
    assert "text_recognition_onnx/configs/tensorrt_fp16.pbtxt" in onnx_variants
    add_ensemble(repository)
    assert validate(repository) == [] and validate(onnx_repository) == []


def test_a_misspelled_tensor_in_a_variant(repository):
    path = repository / "text_recognition" / "configs" / "dynamic_batching.pbtxt"
    path.write_text(path.read_text().replace('name: "input.1"', 'name: "input_1"'))
    problems = validate(repository)
    assert any("dynamic_batching.pbtxt: input 'input_1' is not in config.pbtxt" in p for p in problems)
    assert any("dynamic_batching.pbtxt: input 'input.1' of config.pbtxt is missing" in p for p in problems)


def test_a_variant_that_changes_a_type_or_dims(repository):
    path = repository / "text_recognition" / "configs" / "no_batching.pbtxt"
    path.write_text(path.read_text().replace("dims: [ -1, 37 ]", "dims: [ -1, 36 ]"))
    assert any("'308' is TYPE_FP32 [-1, 36], config.pbtxt says TYPE_FP32 [-1, 37]" in p for p in validate(repository))


def test_a_name_that_differs_from_the_folder_and_an_unknown_field(repository, onnx_repository):
    path = repository / "text_recognition" / "configs" / "queue_delay_100us.pbtxt"
    path.write_text(path.read_text().replace('name: "text_recognition"', 'name: "text_recogniton"'))
    broken = onnx_repository / "text_recognition_onnx" / "configs" / "dynamic_batching.pbtxt"
    broken.write_text(broken.read_text().replace("dynamic_batching { }", "dynamic_batching { max_delay: 5 }"))
    problems = validate(repository) + validate(onnx_repository)
    assert any("name 'text_recogniton' differs from its folder" in p for p in problems)
    assert any("not a valid Triton model configuration" in p and "max_delay" in p for p in problems)


@pytest.mark.parametrize(
    "change, expected",
    [
        (('value: "LINES"', 'value: "LINE"'), "reads 'LINE', which is neither an ensemble input nor a step's output"),
        (('key: "input.1"', 'key: "input"'), "maps 'input', which is not an input of text_recognition"),
        (('key: "308"', 'key: "309"'), "maps '309', which is not an output of text_recognition"),
        (('name: "LINES", data_type: TYPE_FP32', 'name: "LINES", data_type: TYPE_UINT8'), "feeds 'LINES' (TYPE_UINT8)"),
        (('model_name: "text_recognition"', 'model_name: "text_recognizer"'),
         "names 'text_recognizer', which is not in"),
        (('name: "LOGITS", data_type: TYPE_FP32', 'name: "LOGITS", data_type: TYPE_FP16'), "'LOGITS' is TYPE_FP16"),
    ],
    ids=["unknown-source", "unknown-input", "unknown-output", "type-mismatch", "unknown-model", "output-type"],
)
def test_a_broken_ensemble_mapping(repository, change, expected):
    add_ensemble(repository, ENSEMBLE.replace(*change))
    problems = validate(repository)
    assert any(expected in p for p in problems), problems


def test_a_python_model_without_its_checkpoint(repository):
    (repository / "text_recognition" / "1" / "str_64ch.pth").unlink()
    assert any("names 1/str_64ch.pth, which does not exist" in p for p in validate(repository))


def test_the_onnx_model_keeps_the_served_contract(onnx_repository):
    path = onnx_repository / "text_recognition_onnx" / "config.pbtxt"
    path.write_text(path.read_text().replace("dims: [ 26, 37 ]", "dims: [ 25, 37 ]"))
    problems = validate(onnx_repository)
    assert any("config.pbtxt: output '308' must be TYPE_FP32 [26, 37] for width 100" in p for p in problems), problems


def test_an_engine_or_precision_the_recogniser_does_not_know(repository):
    path = repository / "text_recognition" / "config.pbtxt"
    text = path.read_text().replace('{ key: "engine", value: { string_value: "auto" } }',
                                    '{ key: "engine", value: { string_value: "onnx" } }')
    path.write_text(text.replace("parameters [",
                                 'parameters [\n  { key: "precision", value: { string_value: "fp8" } },', 1))
    problems = validate(repository)
    assert any("parameter 'engine' is 'onnx'; it must be one of auto, torch, onnxruntime, openvino" in p
               for p in problems)
    assert any("parameter 'precision' is 'fp8'; it must be one of auto, f32, bf16" in p for p in problems)


@pytest.mark.parametrize("model", ["ocr_postprocess", "ocr_page"])
def test_a_way_of_keeping_readings_that_no_model_knows(repository, model):
    path = repository / model / "config.pbtxt"
    path.write_text(path.read_text().replace('{ string_value: "most_agreed" }', '{ string_value: "loudest" }'))
    assert any(p.startswith(f"{model}/config.pbtxt: model parameter 'read_again_keeps' must be one of most_agreed, "
                            "most_confident, got 'loudest'") for p in validate(repository))


def parameters_of(model: str) -> dict[str, str]:
    config = read_model_config(DEFAULT_REPOSITORY / model)
    return {key: value.string_value for key, value in config.parameters.items()}


def test_the_shipped_configs_read_again_as_the_contract_says_the_served_ocr_does():
    settings = postprocess_settings(parameters_of(POSTPROCESS))
    assert (settings.read_again_below, settings.read_again_keeps) == (READ_AGAIN_BELOW, READ_AGAIN_KEEPS)
    assert page_settings(parameters_of(OCR_PAGE)).read_again_keeps == READ_AGAIN_KEEPS


def set_second_recognizer(repository, name):
    path = repository / "ocr_postprocess" / "config.pbtxt"
    text = path.read_text()
    assert '{ key: "second_recognizer", value: { string_value: "text_recognition_second" } }' in text
    path.write_text(text.replace('string_value: "text_recognition_second"', f'string_value: "{name}"'))


def test_a_second_recogniser_that_is_not_in_the_repository(repository):
    set_second_recognizer(repository, "text_recognition_third")
    assert ("ocr_postprocess: it calls 'text_recognition_third', which is not in the repository"
            in validate(repository))


def test_a_second_recogniser_must_take_and_give_what_the_recogniser_does(repository):
    set_second_recognizer(repository, "ocr_preprocess")
    assert any(p.startswith("ocr_postprocess: its second_recognizer 'ocr_preprocess' must have text_recognition's "
                            "tensors") for p in validate(repository))


def test_a_second_recogniser_must_have_other_weights_than_the_recogniser_and_lines_to_read(repository):
    set_second_recognizer(repository, "text_recognition")
    assert any("its second_recognizer 'text_recognition' must be a recogniser with other weights" in p
               for p in validate(repository))
    path = repository / "ocr_postprocess" / "config.pbtxt"
    text = path.read_text().replace('"text_recognition" }', '"text_recognition_second" }')
    path.write_text(re.sub(r'(key: "read_again_below", value: \{ string_value: )"[0-9.]+"', r'\1"0"', text))
    assert any(p.startswith("ocr_postprocess/config.pbtxt: model parameter 'second_recognizer' names") and
               "set it above 0" in p for p in validate(repository))


def test_a_second_recogniser_in_a_folder_of_another_name_is_checked_as_a_recogniser(repository):
    shutil.move(repository / "text_recognition_second", repository / "text_recognition_other")
    config = repository / "text_recognition_other" / "config.pbtxt"
    config.write_text(config.read_text().replace('name: "text_recognition_second"', 'name: "text_recognition_other"'))
    set_second_recognizer(repository, "text_recognition_other")
    assert validate(repository) == []
    config.write_text(config.read_text().replace('dims: [ -1, 37 ]', 'dims: [ -1, 38 ]'))
    assert any(p.startswith("text_recognition_other/config.pbtxt: output '308' must be") for p in validate(repository))
