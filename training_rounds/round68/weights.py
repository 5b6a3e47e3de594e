"""The weights round 68's explorations read, and an in-process reader of any weights file, as evaluate.py reads
them: one compute thread, f32, on the CPU."""
import torch

from str_ocr.checkpoint import checkpoint_width, load_model
from str_ocr.engines import build_engine, choose_engine
from str_ocr.recognizer import Recognizer

E = "training_rounds/round22/str_64ch.pth"
"""The served first weights."""
X = "training_rounds/round62/str_64ch.pth"
"""The second weights served while round 68 ran (round 62's), which its explorations read."""

torch.set_num_threads(1)
DEVICE = torch.device("cpu")


def recognizer(path: str) -> Recognizer:
    model = load_model(path, checkpoint_width(path))
    return Recognizer(build_engine(model, choose_engine("torch", DEVICE), DEVICE, 1, "f32"), max_lines=256)


def reader(path: str):
    """What ``path``'s weights read in grey ``[32, W]`` uint8 lines (``Recognizer.read``)."""
    return recognizer(path).read
