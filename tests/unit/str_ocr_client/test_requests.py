"""The client library's request builders and readers, without a server."""

import numpy as np
import pytest

from str_ocr.contract import IMAGE, INPUT_NAME
from str_ocr_client.requests import image_inputs, random_lines, recognizer_inputs
from str_ocr_client.samples import truth_from_name


def test_the_recognizer_input_carries_the_contracts_name_shape_and_type():
    lines = random_lines(3, 57, seed=1)
    assert lines.shape == (3, 1, 32, 57) and lines.min() >= -1 and lines.max() <= 1
    (tensor,) = recognizer_inputs(lines)
    assert (tensor.name(), tensor.shape(), tensor.datatype()) == (INPUT_NAME, [3, 1, 32, 57], "FP32")
    (as_fp16,) = recognizer_inputs(lines.astype(np.float16))
    assert as_fp16.datatype() == "FP16"  # what the model will refuse, sent as it is


def test_an_image_is_one_uint8_row_of_its_bytes():
    (tensor,) = image_inputs(b"\x89PNG....")
    assert (tensor.name(), tensor.shape(), tensor.datatype()) == (IMAGE, [1, 8], "UINT8")


@pytest.mark.parametrize("name, truth", [("0007_hello.png", "hello"), ("line.png", None), ("a_b-c.png", None),
                                         ("x_World2.jpg", "world2")])
def test_the_truth_of_a_file_is_in_its_name(name, truth, tmp_path):
    assert truth_from_name(tmp_path / name) == truth
