"""Exploration: where the served pair's held-out variable-width mistakes lie by E's first confidence (seed
6117), read again below 0.8, 0.9 and 1.0 (every line)."""
import torch

from str_ocr.checkpoint import checkpoint_width, load_model
from str_ocr.engines import build_engine, choose_engine
from str_ocr.evaluate import draw_group
from str_ocr.read_again import read_again_where_unsure
from str_ocr.recognizer import Recognizer

torch.set_num_threads(1)
device = torch.device("cpu")


def reader(path):
    model = load_model(path, checkpoint_width(path))
    return Recognizer(build_engine(model, choose_engine("torch", device), device, 1, "f32"), max_lines=256).read


E = reader("training_rounds/round22/str_64ch.pth")
X = reader("model_repository/text_recognition_second/1/str_64ch.pth")
edges = [0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.01]
for name, samples in draw_group("held-out", 6117, 1000).items():
    if "variable" not in name:
        continue
    images, truths = [s.image for s in samples], [s.text for s in samples]
    first = E(images)
    for below in (0.8, 0.9, 1.0):
        kept, _ = read_again_where_unsure(images, E, below, second=X)
        wrong = [i for i in range(len(images)) if kept[i].text != truths[i]]
        buckets = [sum(lo <= first[i].confidence < hi for i in wrong) for lo, hi in zip(edges, edges[1:])]
        print(f"{name} below {below}: {len(wrong)} wrong; by E's first confidence {list(zip(edges, buckets))}",
              flush=True)
    first_wrong = [sum(lo <= r.confidence < hi and r.text != t for r, t in zip(first, truths))
                   for lo, hi in zip(edges, edges[1:])]
    lines = [sum(lo <= r.confidence < hi for r in first) for lo, hi in zip(edges, edges[1:])]
    print(f"  E alone wrong by confidence {first_wrong}, lines {lines}", flush=True)
