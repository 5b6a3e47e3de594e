"""How many of round 67's training lines the first weights read less surely than 0.9 (a probe, not a stage: seed 3).

    PYTHONPATH=backend_src .venv/bin/python training_rounds/round67/probe_counted_share.py ROUND_FLAGS

ROUND_FLAGS: the rule's command from --output-channels to --look-alikes 1.0, with --batch-size 128 --threads 2.
"""
import sys
import time
import torch
from str_ocr import training as train

E = "training_rounds/round22/str_64ch.pth"
args = train.parse_args(sys.argv[1:] + ["--read-again-by", E, "--workers", "0", "--seed", "3"])
cpu = torch.device("cpu")
read_again = train._read_again(args, cpu)
batches = iter(train._batches(args, 0, cpu))
shares = []
for _ in range(8):
    batch = next(batches)
    start = time.perf_counter()
    with torch.no_grad():
        conf = train.line_confidences(train.line_log_probs(read_again.model, batch, cpu, True), batch)
    shares.append(float((conf < read_again.below).float().mean()))
    print(f"share counted {shares[-1]:.3f}, earlier {float(batch.earlier.float().mean()):.2f}, "
          f"E's reading {time.perf_counter() - start:.2f} s", flush=True)
print(f"mean share {sum(shares) / len(shares):.3f}")
