"""The recogniser's GPU path: packing, padding and slicing on the CUDA device, inputs already there."""

import pytest
import torch

from str_ocr import Recognizer, load_model, normalize, output_length
from str_ocr.engines import TorchEngine
from str_ocr.synth import TextLineSynth
from str_ocr_triton.config import served_weights
from tests.unit.str_ocr.test_ragged import GPU_LOGIT_TOLERANCE

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="no CUDA device here: the GPU path is tested where there is one"),
]


@pytest.fixture(scope="module")
def lines():
    synth = TextLineSynth(seed=5)
    return [torch.from_numpy(normalize(synth.sample().image))[None, None] for _ in range(48)]


def test_lines_given_on_the_gpu_are_packed_and_answered_on_the_gpu(lines):
    model = load_model(*served_weights())
    on_gpu = Recognizer(TorchEngine(model, "cuda:0"), max_padding=0.25)
    results = on_gpu([x.cuda() for x in lines])
    assert all(r.is_cuda and r.shape == (1, output_length(x.shape[-1]), 37) for r, x in zip(results, lines))
    assert on_gpu.columns.computed > on_gpu.columns.real  # mixed widths really were padded together
    on_cpu = Recognizer(load_model(*served_weights()), max_padding=0)
    for x, r in zip(lines, results):
        # TF32 convolutions on the GPU round differently from the CPU: compare logits loosely.
        torch.testing.assert_close(r.cpu(), on_cpu([x])[0], rtol=0, atol=GPU_LOGIT_TOLERANCE)


def test_cpu_inputs_to_a_gpu_instance_and_exact_packing_on_the_gpu(lines):
    recognizer = Recognizer(TorchEngine(load_model(*served_weights()), "cuda:0"), max_padding=10)
    packed = recognizer(lines)
    alone = [recognizer([x])[0] for x in lines]
    worst = max(float((p - a).abs().max()) for p, a in zip(packed, alone))
    assert worst <= GPU_LOGIT_TOLERANCE, worst


def test_gpu_readings_equal_cpu_readings():
    synth = TextLineSynth(seed=6)
    images = [synth.sample().image for _ in range(100)]
    gpu = Recognizer(TorchEngine(load_model(*served_weights()), "cuda:0")).read(images)
    cpu = Recognizer(load_model(*served_weights())).read(images)
    assert [r.text for r in gpu] == [r.text for r in cpu]
