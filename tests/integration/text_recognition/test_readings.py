"""The served recogniser reads generated text lines exactly as the same weights on the same engine do in-process."""

import pytest

from str_ocr import Recognizer
from str_ocr.preprocess import TUTORIAL_WIDTH
from str_ocr.synth import TextLineSynth
from str_ocr_client.sending import read_lines

from ..helpers import in_process_engine, served_config

pytestmark = pytest.mark.integration


def test_served_readings_equal_in_process_readings(serve):
    server = serve("dynamic_batching")
    synth = TextLineSynth(seed=31337)
    lines = [synth.sample(TUTORIAL_WIDTH if i % 3 == 0 else None) for i in range(90)]
    images = [s.image for s in lines]
    served = read_lines(server.grpc_url, images)
    local = Recognizer(in_process_engine(served_config(server)), max_padding=0).read(images)  # no padding, as served
    assert [r.text for r in served] == [r.text for r in local]
    for a, b in zip(served, local):
        assert a.confidence == pytest.approx(b.confidence, abs=1e-3)
    assert sum(r.text == s.text for r, s in zip(served, lines)) >= 0.9 * len(lines)
