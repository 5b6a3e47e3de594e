import numpy as np

from str_ocr.images import image_to_line
from str_ocr.synth import TextLineSynth
from str_ocr_client.samples import generated_images


def test_generated_files_are_stretched_once_by_the_served_preprocessing():
    # The files are what a user sends, lines at their own aspect ratio: ocr_preprocess stretches them, not the file.
    items = generated_images(6, seed=3)
    served = TextLineSynth(3)
    for item in items:
        sample = served.sample()
        assert item.truth == sample.text
        width = image_to_line(item.data).shape[-1]
        assert abs(width - sample.image.shape[-1]) <= 1, item.name
    assert len({np.frombuffer(item.data, np.uint8).size for item in items}) > 1
