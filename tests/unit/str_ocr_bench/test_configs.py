"""The configurations a sweep serves: each variant on each engine asked for."""

from __future__ import annotations

from str_ocr_bench.configs import selected_variants, with_engines


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
    assert "precision" not in variants["recommended@openvino"].parameters
