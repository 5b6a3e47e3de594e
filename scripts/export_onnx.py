"""Export the recogniser to ONNX with the tutorial's tensor names, check it, and compare it with PyTorch.

    .venv/bin/python scripts/export_onnx.py                                   # the shipped weights
    .venv/bin/python scripts/export_onnx.py --checkpoint None-ResNet-None-CTC.pth --output-channels 512
    .venv/bin/python scripts/export_onnx.py --dynamic-width                   # any width, not only 100

``input.1`` [batch, 1, 32, 100] -> ``308`` [batch, 26, 37], batch dynamic; with ``--dynamic-width`` the width
too (``308`` is then [batch, W // 4 + 1, 37]), and the served config's dims become [1, 32, -1] and [-1, 37].
Exits non-zero when the export fails, or when ONNX Runtime's logits differ from PyTorch's beyond
``--atol-scale`` x the largest logit + ``--rtol`` x the logit, or a test line decodes to another text
(``str_ocr.export``, which this command runs, by default with the weights ``text_recognition``'s config serves).
"""

import sys

from str_ocr.export import OPSET, main
from str_ocr_triton.config import served_weights

__all__ = ["OPSET", "main"]

if __name__ == "__main__":
    sys.exit(main(shipped_weights=served_weights))
