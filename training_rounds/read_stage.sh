#!/bin/bash
# Reads one stage of a round as the rules of rounds 71 to 74 write it, then checks it (check_stage.py):
#   bash training_rounds/read_stage.sh ROUND LETTER WEIGHTS STAGE SEED
#   e.g. bash training_rounds/read_stage.sh round74 W runs/round74/model.pth 1 7481
# Stage 1 reads 2,000 lines a set, stage 2 5,000: the candidate E+LETTER and the served pair against E, and in stage 2
# E+LETTER and E alone against base on the current and training sets. Two reads at a time, one compute thread each;
# the reports go beside the round's rule.txt, which must name the stage's seed.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bash training_rounds/read_stage.sh ROUND LETTER WEIGHTS STAGE(1|2) SEED"
[ $# -eq 5 ] || { echo "$usage" >&2; exit 2; }
round=$1 letter=$2 weights=$3 stage=$4 seed=$5
[[ $stage == [12] ]] || { echo "$usage" >&2; exit 2; }
rule=training_rounds/$round/rule.txt prefix=training_rounds/$round/stage$stage
grep -q "stage $stage, seed $seed," "$rule" || { echo "$rule names no stage $stage with seed $seed" >&2; exit 2; }
[ -f "$weights" ] || { echo "$weights: no such weights" >&2; exit 2; }
if compgen -G "$prefix-*.json" > /dev/null; then echo "$prefix-*.json: stage $stage was read already" >&2; exit 2; fi
if [ "$stage" = 2 ] && ! grep -qx PASS "training_rounds/$round/stage1-check.txt" 2>/dev/null; then
  echo "stage 1 of $round has not passed: stage 2's seed stays unread" >&2; exit 2
fi
E=training_rounds/round22/str_64ch.pth
base=training_rounds/base/str_64ch.pth
served=model_repository/text_recognition_second/1/str_64ch.pth
count=$([ "$stage" = 1 ] && echo 2000 || echo 5000)
export PYTHONPATH=backend_src OMP_NUM_THREADS=1

read_against() {  # NAME AGAINST FLAGS...: one evaluate.py read, its report and JSON beside the round's rule
  local name=$1 against=$2; shift 2
  .venv/bin/python scripts/evaluate.py --checkpoint "$E" "$@" --against "$against" --against-read-again-below 0.7 \
    --against-keep most-confident --seed "$seed" --count "$count" --examples 0 --json "$prefix-$name.json" \
    > "$prefix-$name.txt" 2>&1
}

# Two reads side by side, each waited for by its pid so that either failing stops the script
read_against "E+$letter-against-e" "$E" --second-checkpoint "$weights" & first=$!
read_against "E+served-against-e" "$E" --second-checkpoint "$served" & second=$!
wait $first; wait $second
if [ "$stage" = 2 ]; then
  read_against "E+$letter-against-base" "$base" --second-checkpoint "$weights" --sets current training & first=$!
  read_against "E-against-base" "$base" --second-checkpoint none --read-again-below 0.7 --keep most-confident \
    --sets current training & second=$!
  wait $first; wait $second
fi
.venv/bin/python training_rounds/check_stage.py "$round" "$letter" "$stage" | tee "$prefix-check.txt"
