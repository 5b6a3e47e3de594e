"""Round 20's prototype: round 19's context head trained together with the shipped weights beneath it.

Round 19 trained the head over frozen frames and it learnt little (its loss fell from 0.156 to about 0.145). Here the
ResNet and the classifier train too, at a learning rate a tenth of the head's, so that the frames can change to
serve the head. Batch norm keeps the shipped weights' running statistics (eval mode): the network reads each line as
it will be served, and mixed batches do not move the statistics the current faces are read with. From the repository
root:

    .venv/bin/python training_rounds/round20/joint_head.py --minutes 95 --seed 2020 --run-dir runs/joint \\
        --init training_rounds/round19/head-b.pt

Round 21 trains round 20's network and head on, with more of the current faces' fixed lines:

    .venv/bin/python training_rounds/round20/joint_head.py --minutes 95 --seed 2121 --run-dir runs/joint21 \\
        --network training_rounds/round20/str_64ch.pth --init training_rounds/round20/head.pt --head-lr 3e-4 \\
        --network-lr 4e-5 --changed-flags "--earlier-share 0.65 --fixed-fraction 0.65"
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from str_ocr import load_model
from str_ocr.training import ctc_loss, learning_rate, save_atomically

sys.path.insert(0, str(Path(__file__).parents[1] / "round19"))
from context_head import SHIPPED, ContextHead, batches, head_logits, shared_arguments  # noqa: E402

LOG_EVERY = 500
SAVE_EVERY = 250


def parse() -> argparse.Namespace:
    parser = shared_arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--init", type=Path, required=True, help="a round-19 head.pt to start the head from")
    parser.add_argument("--head-lr", type=float, default=5e-4)
    parser.add_argument("--network-lr", type=float, default=5e-5)
    parser.add_argument("--network", type=Path, default=SHIPPED, help="the 64-channel weights beneath the head")
    parser.add_argument("--changed-flags", default="", help="scripts/train.py flags in place of round 15's mix's")
    return parser.parse_args()


def main() -> None:
    args = parse()
    args.run_dir.mkdir(parents=True, exist_ok=True)
    saved = args.run_dir / "joint.pt"
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    model, head = load_model(args.network, 64).eval(), ContextHead().eval()
    head.load_state_dict(torch.load(args.init))
    optimizer = torch.optim.AdamW([{"params": head.parameters(), "lr": args.head_lr, "base": args.head_lr},
                                   {"params": model.parameters(), "lr": args.network_lr, "base": args.network_lr,
                                    "weight_decay": 0.0}], weight_decay=1e-4)
    done, elapsed = 0, 0.0
    if saved.exists():  # resume: a run can be cut off at any moment
        state = torch.load(saved)
        model.load_state_dict(state["model"]), head.load_state_dict(state["head"])
        optimizer.load_state_dict(state["optimizer"])
        done, elapsed = state["steps"], state["seconds"]
    start, losses, bar = time.monotonic() - elapsed, [], tqdm(desc="joint", unit="step", initial=done)

    def save() -> None:
        save_atomically({"model": model.state_dict(), "head": head.state_dict(), "optimizer": optimizer.state_dict(),
                         "steps": done, "seconds": time.monotonic() - start}, saved)

    for batch in batches(args.seed + done, args.changed_flags):
        progress = (time.monotonic() - start) / (args.minutes * 60)
        if progress >= 1:
            break
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(group["base"], progress)
        loss = ctc_loss(head_logits(model, head, batch, train_network=True).log_softmax(2), batch)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([*head.parameters(), *model.parameters()], 5.0)
        optimizer.step()
        losses.append(loss.item())
        done += 1
        bar.update(1)
        if done % 20 == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
        if done % SAVE_EVERY == 0:
            save()
        if done % LOG_EVERY == 0:
            with open(args.run_dir / "loss.jsonl", "a") as log:
                log.write(json.dumps({"step": done, "loss": float(np.mean(losses[-LOG_EVERY:]))}) + "\n")
    save()
    print(f"{done} steps; mean loss {np.mean(losses[-200:]):.4f} over the last 200")


if __name__ == "__main__":
    main()
