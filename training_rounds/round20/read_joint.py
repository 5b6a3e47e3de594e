"""Round 20's screen: weights alone (the shipped ones unless a seventh argument names others), and a network with a
context head over its frames, on the same lines of ``scripts/evaluate.py``'s sets; each set's word accuracy and the
difference line by line with its 95 % interval. From the repository root:

    .venv/bin/python training_rounds/round20/read_joint.py training_rounds/round20/str_64ch.pth \\
        training_rounds/round20/head.pt SEED COUNT current,training,held-out OUT [training_rounds/base/str_64ch.pth]
"""

import sys
from pathlib import Path

import torch

from str_ocr import load_model

sys.path.insert(0, str(Path(__file__).parents[1] / "round19"))
from context_head import SHIPPED, ContextHead  # noqa: E402
from read_with_head import readings, screen  # noqa: E402


def main() -> None:
    network, head_path, seed, count, groups, out = sys.argv[1:7]
    torch.set_num_threads(2)
    alone = load_model(sys.argv[7] if len(sys.argv) > 7 else SHIPPED, 64).eval()
    trained, head = load_model(network, 64).eval(), ContextHead().eval()
    head.load_state_dict(torch.load(head_path))
    screen(lambda samples: readings(alone, head, samples, beneath=trained), int(seed), int(count), groups, out)


if __name__ == "__main__":
    main()
