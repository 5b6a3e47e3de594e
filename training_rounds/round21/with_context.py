"""One checkpoint from a prototype's network and context head (rounds 20 and 21): the network's weights and the
head's as ``str_ocr.model.FrameContext``'s, which ``load_model`` reads as a recogniser with context layers. From the
repository root:

    .venv/bin/python training_rounds/round21/with_context.py training_rounds/round20/str_64ch.pth \\
        training_rounds/round20/head.pt runs/round20-with-context.pth
"""

import argparse
from pathlib import Path

import torch

from str_ocr import load_model, save_checkpoint
from str_ocr.checkpoint import checkpoint_width, context_layers
from str_ocr.model import STRModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("network", type=Path, help="weights without context layers")
    parser.add_argument("head", type=Path, help="a prototype's head.pt (round 19's ContextHead state)")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    channels = checkpoint_width(args.network)
    head = {f"SequenceModeling.{key}": value for key, value in torch.load(args.head, weights_only=True).items()}
    model = STRModel(output_channels=channels, context_layers=context_layers(head))
    model.load_state_dict({**load_model(args.network, channels).state_dict(), **head})
    save_checkpoint(model, args.out)
    print(f"{args.out}: {args.network} with {model.context_layers} context layers from {args.head}")


if __name__ == "__main__":
    main()
