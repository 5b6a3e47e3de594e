"""Word accuracy and character error rate of the recogniser on held-out synthetic lines.

    .venv/bin/python scripts/evaluate.py                       # the shipped weights, in-process, every set
    .venv/bin/python scripts/evaluate.py --sets held-out       # only the faces training never sees
    .venv/bin/python scripts/evaluate.py --sets held-out --by-face 100  # and which of them it reads worst
    .venv/bin/python scripts/evaluate.py --url 127.0.0.1:8001  # the same lines through the served model
    .venv/bin/python scripts/evaluate.py --checkpoint PATH --speed  # other weights, and their speed
    .venv/bin/python scripts/evaluate.py --peers rapidocr,easyocr  # beside the peers' recognisers (make peers)
    .venv/bin/python scripts/evaluate.py --by-kind              # each kind of text and case scored apart
    .venv/bin/python scripts/evaluate.py --checkpoint NEW --against OLD  # each set's difference, line by line

The sets are described in ``str_ocr.evaluate``, which this command runs with the weights
``text_recognition``'s config serves, for ``--url``, the project's gRPC client, and for ``--peers``, the
peers' recognisers in their own virtualenvs (``str_ocr_bench.peer_lines``).
"""

from str_ocr.evaluate import main
from str_ocr_bench.peer_lines import read_lines as read_peer_lines
from str_ocr_client.sending import read_lines
from str_ocr_triton.config import served_second_weights, served_weights


def read_peer(peer, images):
    readings = read_peer_lines(peer, images)
    return readings.texts, readings.seconds


if __name__ == "__main__":
    main(shipped_weights=served_weights, read_served=read_lines, read_peer=read_peer,
         shipped_second_weights=served_second_weights)
