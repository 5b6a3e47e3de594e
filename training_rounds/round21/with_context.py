"""One checkpoint from a prototype's network and context head (rounds 20 and 21): the network's weights and the
head's as ``str_ocr.model.FrameContext``'s, which ``load_model`` reads as a recogniser with context layers. From the
repository root:

    .venv/bin/python training_rounds/round21/with_context.py training_rounds/round20/str_64ch.pth \\
        training_rounds/round20/head.pt runs/round20-with-context.pth
"""

import sys

import torch

from str_ocr import load_model, save_checkpoint
from str_ocr.model import STRModel


def main() -> None:
    network_path, head_path, out = sys.argv[1:4]
    network, head = load_model(network_path, 64), torch.load(head_path, weights_only=True)
    layers = len({key.split(".")[1] for key in head})  # layers.<i>.*
    model = STRModel(output_channels=64, context_layers=layers)
    model.load_state_dict({**network.state_dict(), **{f"SequenceModeling.{k}": v for k, v in head.items()}})
    save_checkpoint(model, out)
    print(f"{out}: {network_path} with {layers} context layers from {head_path}")


if __name__ == "__main__":
    main()
