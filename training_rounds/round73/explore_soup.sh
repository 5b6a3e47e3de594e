#!/bin/bash
# Exploration, nothing trained: does a soup of the last two second weights read better than the served one? OP is
# the mean of every float tensor of round 70's O and round 71's P (P was trained from O, so they share a basin); the
# held-out and other sets of seed 7381 (2,000 lines a set) read by E+OP and the served pair E+P, both as served,
# each against E as the rounds' stages read it, side by side. The differences are in explore-soup.txt.
#     bash training_rounds/round73/explore_soup.sh
set -euo pipefail
export OMP_NUM_THREADS=1 PYTHONPATH=backend_src
E=training_rounds/round22/str_64ch.pth
P=training_rounds/round71/str_64ch.pth
OP=$(mktemp -d)/op.pth
.venv/bin/python - "$OP" <<'PY'
import sys

import torch

o, p = (torch.load(f"training_rounds/round{n}/str_64ch.pth", map_location="cpu", weights_only=True) for n in (70, 71))
torch.save({k: (o[k] + v) / 2 if v.is_floating_point() else v for k, v in p.items()}, sys.argv[1])
PY
A="--against $E --against-read-again-below 0.7 --against-keep most-confident"
out=$(mktemp -d)
pids=()
for pair in "E+OP $OP" "E+P $P"; do
  set -- $pair
  .venv/bin/python scripts/evaluate.py --checkpoint $E --second-checkpoint $2 $A --seed 7381 --count 2000 \
      --examples 0 --json $out/$1.json > $out/$1.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { echo "a read failed: see $out/*.log" >&2; exit 1; }; done
.venv/bin/python - $out/E+OP.json $out/E+P.json <<'PY'
import json
import sys

for path in sys.argv[1:]:
    sets = json.load(open(path))["sets"]
    print(path.rsplit("/", 1)[1].removesuffix(".json"), "(word accuracy, difference to E in points, lines won / lost)")
    for name, s in sets.items():
        a = s["against"]
        print(f"  {name:45s} {s['word_accuracy']:7.2%} {100 * a['difference']:+6.2f}  "
              f"(+{a['only_evaluated']} / -{a['only_against']})")
    held = {n: s["against"]["difference"] for n, s in sets.items() if n.startswith("held-out")}
    variable = [d for n, d in held.items() if "variable" in n]
    print(f"  held-out mean {100 * sum(held.values()) / len(held):+.4f}, "
          f"variable-width mean {100 * sum(variable) / len(variable):+.4f}")
PY
