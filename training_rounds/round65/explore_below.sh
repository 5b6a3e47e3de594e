#!/bin/bash
# Exploration, nothing trained: the served pair reading again below 0.8 (served then), 0.9 and 0.95, seed 6117
# (round 59's exploration lines, already read), held-out sets, 1,000 lines a set, each against E read as A.
cd "$(dirname "$0")/../.."
export PYTHONPATH=backend_src OMP_NUM_THREADS=1
E=training_rounds/round22/str_64ch.pth
X=model_repository/text_recognition_second/1/str_64ch.pth
A="--against $E --against-read-again-below 0.7 --against-keep most-confident"
for c in 0.8 0.9 0.95; do
  nice .venv/bin/python scripts/evaluate.py --checkpoint $E --second-checkpoint $X --read-again-below $c $A \
      --sets held-out --seed 6117 --count 1000 --examples 0 \
      --json training_rounds/round65/explore-below-$c-6117.json
done
