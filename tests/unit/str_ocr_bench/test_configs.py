"""The configurations a sweep serves: each variant on each engine asked for."""

from __future__ import annotations

import pytest

from str_ocr_bench.configs import base_variant, selected_variants, served_as, with_engines


def test_each_variant_is_served_on_each_engine_asked_for_and_left_alone_for_auto():
    variants = selected_variants("dynamic_batching,recommended")
    assert with_engines(variants, ["auto"]) is variants
    both = with_engines(variants, ["torch", "onnxruntime"])
    assert list(both) == ["dynamic_batching@torch", "dynamic_batching@onnxruntime", "recommended@torch",
                          "recommended@onnxruntime"]
    assert both["recommended@onnxruntime"].parameters["engine"].string_value == "onnxruntime"
    assert both["recommended@torch"].max_batch_size == variants["recommended"].max_batch_size
    assert variants["recommended"].parameters["engine"].string_value == "auto"  # the originals are left as they were


def test_an_engine_may_name_its_precision():
    variants = with_engines(selected_variants("recommended"), ["openvino", "openvino:bf16"])
    assert list(variants) == ["recommended@openvino", "recommended@openvino-bf16"]
    assert variants["recommended@openvino-bf16"].parameters["precision"].string_value == "bf16"
    assert variants["recommended@openvino"].parameters["precision"].string_value == "f32"  # not auto's choice
    for typo in ["openvno", "openvino:fp16"]:
        with pytest.raises(ValueError, match="write ENGINE or ENGINE:PRECISION"):
            with_engines(selected_variants("recommended"), [typo])


def test_the_swept_names_map_back_to_their_config():
    assert base_variant("recommended@openvino-bf16") == base_variant("recommended") == "recommended"
    assert served_as(["no_batching@torch"]) is None
    assert served_as(["recommended@torch", "recommended"]) == "recommended"
