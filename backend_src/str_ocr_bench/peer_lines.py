"""The recognisers users would pick instead, reading text lines beside the project's: RapidOCR's (PP-OCRv4) and
EasyOCR's (english_g2), each in its own virtualenv (`make peers`) with the weights its PyPI package ships, one
thread, nothing fetched at run time. ``scripts/evaluate.py --peers`` scores them on its sets.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RUNNERS = Path(__file__).parents[2] / "scripts" / "peers"
PEERS = {
    "rapidocr": (Path(".venv-rapidocr/bin/python"), RUNNERS / "rapidocr_lines.py"),
    "easyocr": (Path(".venv-easyocr/bin/python"), RUNNERS / "easyocr_lines.py"),
}


@dataclass(frozen=True)
class PeerReadings:
    texts: list[str]
    """Each line's reading, lower-cased and cut to the project's alphabet (0-9a-z), as its own are scored."""
    seconds: float
    """Wall time of the whole read, in the peer's own process, its models loaded and warm."""


def as_alphabet(text: str) -> str:
    return re.sub("[^0-9a-z]", "", text.lower())


def read_lines(peer: str, images: Sequence[np.ndarray]) -> PeerReadings:
    """``peer``'s readings of ``images`` (grey uint8 lines of any size)."""
    if peer not in PEERS:
        raise KeyError(f"no peer {peer!r}; the peers are {', '.join(PEERS)}")
    python, runner = PEERS[peer]
    if not python.exists():
        raise FileNotFoundError(f"{python} is missing: run `make peers` to install {peer} in its own virtualenv")
    with tempfile.TemporaryDirectory() as folder:
        lines = Path(folder) / "lines.npz"
        np.savez(lines, **{str(i): image for i, image in enumerate(images)})
        done = subprocess.run([str(python), str(runner), str(lines)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{peer} failed (exit {done.returncode}); its last words:\n{done.stderr[-2000:]}\n"
                           f"reinstall it with `rm -r {python.parent.parent} && make peers`")
    result = json.loads(done.stdout.splitlines()[-1])
    return PeerReadings([as_alphabet(t) for t in result["texts"]], result["seconds"])
