#!/bin/bash
# Reads one stage of a round as the rules of rounds 45 to 74 write it, then checks it (check_stage.py):
#   bash training_rounds/read_stage.sh ROUND LETTER WEIGHTS STAGE SEED
#   e.g. bash training_rounds/read_stage.sh round74 W runs/round74/model.pth 1 7481
# Stage 1 reads 2,000 lines a set, stage 2 5,000: the candidate E+LETTER and the served pair against E, and in stage 2
# E+LETTER and E alone against base. Two reads at a time, one compute thread each; outputs in training_rounds/ROUND/.
set -euo pipefail
cd "$(dirname "$0")/.."
round=$1 letter=$2 weights=$3 stage=$4 seed=$5
E=training_rounds/round22/str_64ch.pth base=training_rounds/base/str_64ch.pth
served=model_repository/text_recognition_second/1/str_64ch.pth out=training_rounds/$round/stage$stage
count=$([ "$stage" = 1 ] && echo 2000 || echo 5000)
export PYTHONPATH=backend_src OMP_NUM_THREADS=1

read_against() {  # NAME AGAINST FLAGS...: one evaluate.py read, its report and JSON beside the round's rule
  local name=$1 against=$2; shift 2
  .venv/bin/python scripts/evaluate.py --checkpoint $E "$@" --against "$against" --against-read-again-below 0.7 \
    --against-keep most-confident --seed "$seed" --count "$count" --examples 0 --json "$out-$name.json" \
    > "$out-$name.txt" 2>&1
}

read_against "E+$letter-against-e" $E --second-checkpoint "$weights" &
read_against "E+served-against-e" $E --second-checkpoint $served &
wait
if [ "$stage" = 2 ]; then
  read_against "E+$letter-against-base" $base --second-checkpoint "$weights" &
  read_against "E-against-base" $base --second-checkpoint none --read-again-below 0.7 --keep most-confident &
  wait
fi
.venv/bin/python training_rounds/check_stage.py "$round" "$letter" "$stage" | tee "$out-check.txt"
