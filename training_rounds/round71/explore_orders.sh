#!/bin/bash
# Exploration, nothing trained: the held-out variable-width lines of seed 8769 (2,000 a polarity) read by the served
# pair E+O as served; with O reading first and E second; with every line read again; and by O alone, once. Each
# against E as the rounds' stages read it. Their summary lines are in explore-orders.txt.
#     bash training_rounds/round71/explore_orders.sh
export OMP_NUM_THREADS=1 PYTHONPATH=backend_src
E=training_rounds/round22/str_64ch.pth
O=training_rounds/round70/str_64ch.pth  # served.py's SECOND
A="--against $E --against-read-again-below 0.7 --against-keep most-confident"
C="--sets held-out --seed 8769 --count 2000 --examples 0"
VARIABLE='/^held-out: variable/ {on = 1; print; next} /^held-out: fixed/ {on = 0} on && /evaluated less/'
summary() {
  echo "== $1"; shift
  .venv/bin/python scripts/evaluate.py "$@" $A $C | awk "$VARIABLE"
}
summary "E+O, as served" --checkpoint $E --second-checkpoint $O
summary "O first, E second" --checkpoint $O --second-checkpoint $E
# 1.0, the most evaluate.py takes, read all 4,000 lines again here (none was read with a confidence of 1)
summary "E+O, every line read again" --checkpoint $E --second-checkpoint $O --read-again-below 1.0
summary "O alone, each line once" --checkpoint $O --second-checkpoint none --read-again-below 0
