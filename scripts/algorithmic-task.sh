#!/usr/bin/env bash
# An algorithmic task end to end: generates data/TASK (scripts/make-algorithmic-data.sh, default
# lengths) unless it exists, trains CONFIG in MODEL_DIR, translates every test file
# (data/TASK/test-*.src, greedy or the config's beam) and prints per-token and exact-sequence
# accuracy by length: recall counts items, the other tasks source symbols.
#
#   scripts/algorithmic-task.sh TASK CONFIG MODEL_DIR [--set key=value ...]
#   scripts/algorithmic-task.sh --eval TASK MODEL_DIR        (an already trained model)
#
# Per-token accuracy: target positions where the output has the right token, over the reference
# length (a missing or extra token counts as wrong); exact: outputs equal to the reference.
# For recall both are per queried item (3 tokens).
#
# Every symbol must be one token: with pieces split by script, BPE keeps the letter and the digits
# of "s169" apart ("▁s" + "169"), which doubles the sequence and makes every other target the
# trivial "▁s". So training sets tokenizer.split_by_script=false (the ntm configs have it too;
# a --set after it overrides), and the script stops if the learned tokenizer still splits a
# symbol. Environment: HEED (default build/heed), DATA
# (default data/TASK: another data directory, e.g. one made with other lengths).
set -euo pipefail
cd "$(dirname "$0")/.."

heed=${HEED:-build/heed}
[[ -x $heed ]] || { echo "algorithmic-task.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
train=1
if [[ ${1:-} == --eval ]]; then train=0; shift; fi
task=${1:-}
case $task in
  copy | reverse | repeat | recall) ;;
  *) echo "usage: scripts/algorithmic-task.sh [--eval] copy|reverse|repeat|recall [CONFIG] MODEL_DIR [--set k=v ...]" >&2; exit 2 ;;
esac
if ((train)); then
  (($# >= 3)) || { echo "algorithmic-task.sh: TASK CONFIG MODEL_DIR needed" >&2; exit 2; }
  config=$2 model=$3
  shift 3
else
  (($# == 2)) || { echo "algorithmic-task.sh: --eval TASK MODEL_DIR needed" >&2; exit 2; }
  model=$2
fi
data=${DATA:-data/$task}
[[ -e $data/train.src ]] || bash scripts/make-algorithmic-data.sh "$task" --out "$data"

if ((train)); then
  if [[ -e $model ]]; then
    echo "algorithmic-task.sh: removing the previous run in $model" >&2
    rm -rf "$model"
  fi
  echo "load average before training: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  start=$(date +%s)
  "$heed" train -c "$config" -m "$model" --set tokenizer.split_by_script=false \
    --set "data.train.src=$data/train.src" --set "data.train.tgt=$data/train.tgt" \
    --set "data.dev.src=$data/dev.src" --set "data.dev.tgt=$data/dev.tgt" "$@"
  echo "trained in $(( $(date +%s) - start ))s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

tokens=$("$heed" -q tokenizer encode -m "$model/tokenizer.json" -i "$data/dev.src" | wc -w)
words=$(wc -w < "$data/dev.src")
if ((tokens != words)); then
  echo "algorithmic-task.sh: $model/tokenizer.json splits symbols into pieces ($tokens tokens for $words symbols in $data/dev.src): train with tokenizer.split_by_script=false and a vocabulary larger than the symbols" >&2
  exit 1
fi

printf '\n%-14s %7s %6s %11s %11s\n' "test file" "length" "pairs" "per-token" "exact"
for src in "$data"/test-*.src; do
  name=$(basename "$src" .src)
  hyp=$model/$name.hyp
  "$heed" -q translate -m "$model" -i "$src" -o "$hyp"
  paste -d '\t' "$src" "${src%.src}.tgt" "$hyp" | awk -F '\t' -v name="$name" -v task="$task" '
  {
    ns = split($1, s, " "); nr = split($2, r, " "); nh = split($3, h, " ")
    len = task == "recall" ? (ns - 3) / 4 : (task == "repeat" ? ns - 1 : ns)
    ok = 0
    for (i = 1; i <= nr; i++) if (i <= nh && h[i] == r[i]) ok++
    pairs[len]++; tokens[len] += nr; right[len] += ok; exact[len] += ($3 == $2)
    all_pairs++; all_tokens += nr; all_right += ok; all_exact += ($3 == $2)
  }
  END {
    for (l in pairs) order[++n] = l + 0
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
    if (n > 1) for (i = 1; i <= n; i++) { l = order[i]
      printf "%-14s %7d %6d %10.2f%% %10.2f%%\n", name, l, pairs[l], 100 * right[l] / tokens[l], 100 * exact[l] / pairs[l] }
    printf "%-14s %7s %6d %10.2f%% %10.2f%%\n", name, "all", all_pairs, 100 * all_right / all_tokens, 100 * all_exact / all_pairs
  }'
done
