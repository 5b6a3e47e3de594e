"""Round 19's prototype: a context head over the frozen shipped weights' frames, trained alone.

The recogniser classifies each frame from its own receptive field (None-ResNet-None-CTC). This head sits between
the shipped weights' ResNet and their classifier: pre-norm self-attention layers over a line's frames, padding
masked, residual, with their output projections zero at the start so that it first reads exactly as the shipped
weights do. Only the head trains; the ResNet and the classifier stay as shipped. A prototype, kept so that the round
can be read and repeated; the next step builds such a head into ``str_ocr.model``. From the repository root:

    .venv/bin/python training_rounds/round19/context_head.py --minutes 60 --seed 1919 --run-dir runs/head-a
    .venv/bin/python training_rounds/round19/context_head.py --minutes 50 --seed 1920 --run-dir runs/head-b \\
        --init runs/head-a/head.pt --lr 5e-4
"""

import argparse
import json
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from str_ocr import STRModel, load_model
from str_ocr.synth import Variety
from str_ocr.training import Batch, Earlier, SyntheticBatches, ctc_loss, learning_rate, parse_args

SHIPPED = Path("training_rounds/blend/str_64ch.pth")  # the weights shipped when rounds 14 to 22 ran
ROUND_FLAGS = ("--fonts extended --earlier-fonts core --earlier-share 0.55 --crops 0.3 --light-on-dark 0.3 "
               "--stretch 0.15 --heavy 0.1 --basic-layout 0.1 --balanced-kinds 0.5 --old-style-figures 0.5 "
               "--warped-glyphs 0.3 --thin 0.15 --old-style-faces 0.3 --fixed-fraction 0.55 --batch-size 48")
"""Round 15's data mix (``training_rounds/commands.md``), as ``scripts/train.py`` flags."""
LOG_EVERY = 500


class ContextHead(nn.Module):
    """``[N, T, C]`` frames -> ``[N, T, C]``, each line's frames attending to its own only."""

    def __init__(self, channels: int = 64, layers: int = 2, heads: int = 4, feed_forward: int = 256) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(channels, heads, feed_forward, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(layers))
        for layer in self.layers:  # residual branches that add nothing yet: the head starts as the identity
            for projection in (layer.self_attn.out_proj, layer.linear2):
                nn.init.zeros_(projection.weight)
                nn.init.zeros_(projection.bias)

    def forward(self, frames: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        padding = torch.arange(frames.shape[1], device=frames.device)[None, :] >= lengths.to(frames.device)[:, None]
        for layer in self.layers:
            frames = layer(frames, src_key_padding_mask=padding)
        return frames


def head_logits(model: STRModel, head: ContextHead, batch: Batch, train_network: bool = False) -> torch.Tensor:
    """The batch's ``[N, T, classes]`` logits with ``head`` between ``model``'s ResNet and its classifier; the
    ResNet's frames carry gradients only if ``train_network``."""
    with torch.set_grad_enabled(train_network and torch.is_grad_enabled()):
        frames = model.frames(batch.images, batch.mask_widths())
    return model.Prediction(head(frames, batch.input_lengths))


def shared_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments round 19's and round 20's trainers share."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--minutes", type=float, required=True, help="training time; the learning rate decays over it")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--run-dir", type=Path, required=True, help="the run's weights and loss.jsonl are written here")
    return parser


def parse() -> argparse.Namespace:
    parser = shared_arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--init", type=Path, default=None, help="an earlier run's head.pt, to train on")
    parser.add_argument("--lr", type=float, default=1e-3)
    return parser.parse_args()


def batches(seed: int, changed_flags: str = "") -> DataLoader:
    """Round 15's mix, with ``changed_flags`` (``scripts/train.py`` flags) in place of its own where given."""
    args = parse_args((ROUND_FLAGS + " " + changed_flags).split())
    variety = Variety(**{field.name: getattr(args, field.name) for field in fields(Variety)})
    lines = SyntheticBatches(seed, args.batch_size, args.fixed_fraction, fonts=args.fonts, variety=variety,
                             earlier=Earlier(args.earlier_fonts, args.earlier_share))
    return DataLoader(lines, batch_size=None, num_workers=1, prefetch_factor=8, persistent_workers=True)


def step(model: STRModel, head: ContextHead, optimizer: torch.optim.Optimizer, batch: Batch) -> float:
    log_probs = head_logits(model, head, batch).log_softmax(2)
    loss = ctc_loss(log_probs, batch)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(head.parameters(), 5.0)
    optimizer.step()
    return loss.item()


def main() -> None:
    args = parse()
    args.run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    model = load_model(SHIPPED, 64).eval().requires_grad_(False)
    head = ContextHead()
    if args.init:
        head.load_state_dict(torch.load(args.init))
    optimizer = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=1e-4)
    start, losses, bar = time.monotonic(), [], tqdm(desc="head", unit="step")
    for batch in batches(args.seed):
        progress = (time.monotonic() - start) / (args.minutes * 60)
        if progress >= 1:
            break
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(args.lr, progress)
        losses.append(step(model, head, optimizer, batch))
        bar.update(1)
        if len(losses) % 20 == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
        if len(losses) % LOG_EVERY == 0:  # steps count from this run's start, also after --init
            torch.save(head.state_dict(), args.run_dir / "head.pt")
            with open(args.run_dir / "loss.jsonl", "a") as log:
                log.write(json.dumps({"step": len(losses), "loss": float(np.mean(losses[-LOG_EVERY:]))}) + "\n")
    torch.save(head.state_dict(), args.run_dir / "head.pt")
    print(f"{len(losses)} steps; mean loss {np.mean(losses[:50]):.4f} over the first 50, {np.mean(losses[-200:]):.4f} "
          "over the last 200")


if __name__ == "__main__":
    main()
