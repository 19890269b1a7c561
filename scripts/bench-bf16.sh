#!/usr/bin/env bash
# bf16 training quality against fp32: each translation model trained twice at the same time, one
# thread each (two cores: neither run waits for the other), fp32 and training.precision bf16, the
# same config, seed, data and tokenizer, for the same wall time. Reports per architecture the
# updates reached, dev BLEU at the end (equal time) and at the last update both validated (equal
# steps), and draws both learning curves in one picture (heed plot).
#
#   scripts/bench-bf16.sh CORPUS_DIR [--minutes 30] [--archs gru-bahdanau,transformer]
#                         [--validate-every 500] [--work DIR] [--set KEY=VALUE ...]
#
# CORPUS_DIR holds train.{en,de} and dev.{en,de}. Needs a CPU with avx512_bf16.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/bench-bf16.sh CORPUS_DIR [--minutes M] [--archs LIST] [--validate-every N] [--work DIR] [--set KEY=VALUE ...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
corpus=$1; shift
minutes=30 archs=gru-bahdanau,transformer every=500 work= sets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --archs) archs=$2; shift 2 ;;
    --validate-every) every=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) usage ;;
  esac
done
source scripts/corpus-flags.sh
corpus_flags "$corpus"
heed=${HEED:-build/heed}
[[ -x $heed ]] || { echo "bench-bf16.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
grep -q -w avx512_bf16 /proc/cpuinfo || { echo "bench-bf16.sh: this CPU has no avx512_bf16" >&2; exit 2; }
[[ -n $work ]] || work=$(mktemp -d /tmp/heed-bench-bf16.XXXXXX)
mkdir -p "$work"
echo "bench-bf16: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $minutes min per run, work in $work, load average $(cut -d' ' -f1-3 /proc/loadavg)"

[[ -f $work/tokenizer.json ]] || "$heed" -q tokenizer train --vocab-size 8000 -o "$work/tokenizer.json" "$corpus/train.en" "$corpus/train.de"

# the dev BLEU of a run's metrics.jsonl: at step S (or the last validation when S is empty)
python_report() {
  python3 - "$@" <<'PY'
import json, sys
runs = sys.argv[1:]
vals = []
for r in runs:
    recs = [json.loads(l) for l in open(f"{r}/metrics.jsonl")]
    v = {x["step"]: x for x in recs if x.get("type") == "valid" and "bleu" in x}
    steps = [x["step"] for x in recs if x.get("type") == "train"]
    vals.append((v, max(steps) if steps else 0))
common = sorted(set(vals[0][0]) & set(vals[1][0]))
last = [max(v) for v, _ in vals]
print(f"  updates: fp32 {vals[0][1]}, bf16 {vals[1][1]} ({vals[1][1] / max(vals[0][1], 1):.2f}x)")
print(f"  equal time: dev BLEU fp32 {vals[0][0][last[0]]['bleu']:.2f} (step {last[0]}), bf16 {vals[1][0][last[1]]['bleu']:.2f} (step {last[1]})")
if common:
    s = common[-1]
    print(f"  equal steps ({s}): dev BLEU fp32 {vals[0][0][s]['bleu']:.2f}, bf16 {vals[1][0][s]['bleu']:.2f}")
    print("  curve (step: fp32 / bf16): " + ", ".join(f"{k}: {vals[0][0][k]['bleu']:.1f} / {vals[1][0][k]['bleu']:.1f}" for k in common))
PY
}

IFS=, read -r -a arch_list <<< "$archs"
for arch in "${arch_list[@]}"; do
  pids=()
  for precision in fp32 bf16; do
    rm -rf "$work/$arch-$precision"
    OMP_NUM_THREADS=1 "$heed" -q --threads 1 train -c "configs/$arch.json" -m "$work/$arch-$precision" \
      "${corpus_sets[@]}" \
      --set "tokenizer.path=$work/tokenizer.json" --set "training.max_time=${minutes}m" \
      --set "training.validate_every=$every" --set "training.precision=$precision" "${sets[@]}" \
      > "$work/$arch-$precision.log" 2>&1 &
    pids+=($!)
  done
  # A run that failed part-way would be compared as if it had had the time: stop instead.
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "bench-bf16: a $arch run failed, see $work/$arch-*.log" >&2; exit 1; }
  done
  echo "$arch:"
  python_report "$work/$arch-fp32" "$work/$arch-bf16"
  "$heed" -q plot -o "$work/$arch-curves.svg" "$work/$arch-fp32" "$work/$arch-bf16"
  echo "  curves: $work/$arch-curves.svg"
done
echo "bench-bf16: load average after $(cut -d' ' -f1-3 /proc/loadavg)"
