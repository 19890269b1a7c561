#!/usr/bin/env bash
# "Learning, shown": the reverse task end to end. Generates data/reverse/ (50,000 training pairs:
# random sequences of 5-30 words from a 50-word vocabulary and the same words reversed), trains
# configs/reverse-ARCH.json from scratch in runs/reverse-ARCH, translates the 500 test sentences
# and prints their BLEU (sacreBLEU-compatible, `heed bleu`) and the loss curve of the run.
#
#   scripts/reverse-task.sh ARCH        ARCH: gru | transformer
#
# Environment: HEED (default build/heed), HEED_THREADS (default: all cores).
# The config's training.max_time bounds the training; the target is BLEU >= 95 within 15 minutes
# on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:-}
case $arch in
  gru | transformer) ;;
  *) echo "usage: scripts/reverse-task.sh gru|transformer" >&2; exit 2 ;;
esac
heed=${HEED:-build/heed}
[[ -x $heed ]] || { echo "reverse-task.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
config=configs/reverse-$arch.json
model=runs/reverse-$arch

bash scripts/make-reverse-data.sh data/reverse 1
if [[ -e $model ]]; then
  echo "reverse-task.sh: removing the previous run in $model" >&2
  rm -rf "$model"
fi
echo "load average before training: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

start=$(date +%s)
"$heed" train -c "$config" -m "$model"
trained=$(date +%s)
"$heed" translate -m "$model" -i data/reverse/test.src -o "$model/test.hyp"
done_at=$(date +%s)

echo
echo "== loss curve ($model/metrics.jsonl)"
# The records are flat one-line JSON objects written by heed; pick fields by name.
awk '
function field(name,    m) {
  if (match($0, "\"" name "\":[^,}]*")) { m = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3); gsub(/"/, "", m); return m }
  return ""
}
BEGIN { printf "%-6s %7s %8s %10s %10s %8s\n", "type", "step", "elapsed", "loss", "dev-loss", "dev-BLEU" }
{
  t = field("type")
  if (t == "train") printf "%-6s %7d %7.0fs %10.4f\n", t, field("step"), field("elapsed"), field("loss")
  else printf "%-6s %7d %7.0fs %10s %10.4f %8.2f\n", t, field("step"), field("elapsed"), "", field("loss"), field("bleu")
}' "$model/metrics.jsonl"

echo
echo "== test set: $(wc -l < data/reverse/test.src) sentences, training $((trained - start))s, translation $((done_at - trained))s"
echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
"$heed" bleu data/reverse/test.tgt -i "$model/test.hyp"
