#!/usr/bin/env bash
# The shipped translation recipes on a corpus, as a user runs them: each config trained for its own
# training.max_time on every core (one run at a time, so each has the machine), then
# its best model translating the dev and the test set with the config's beam, scored with
# sacreBLEU-compatible BLEU. The test set is the held-out check: the recipes were chosen on dev.
# Draws the runs' learning curves in one picture (heed plot), with any --compare runs beside them.
#
#   scripts/bench-recipe.sh CORPUS_DIR [--configs transformer,gru-bahdanau] [--work DIR]
#                           [--compare RUN_DIR ...] [--set KEY=VALUE ...]
#
# CORPUS_DIR holds train.{en,de}, dev.{en,de} and test.{en,de}. Needs an otherwise idle machine:
# the budget is wall time. Every command gets --threads $THREADS (default: every core), not heed's
# default, which leaves out the cores busy when it starts: one busy moment at the start would
# otherwise train the whole budget on fewer cores.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/bench-recipe.sh CORPUS_DIR [--configs LIST] [--work DIR] [--compare RUN_DIR ...] [--set KEY=VALUE ...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
corpus=$1; shift
configs=transformer,gru-bahdanau work= compare=() sets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --compare) compare+=("$2"); shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) usage ;;
  esac
done
source scripts/corpus-flags.sh
corpus_flags "$corpus" test
heed=${HEED:-build/heed}
threads=${THREADS:-$(nproc)}
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "bench-recipe.sh: THREADS must be a positive integer, got '$threads'" >&2; exit 2; }
[[ -x $heed ]] || { echo "bench-recipe.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
[[ -n $work ]] || work=$(mktemp -d /tmp/heed-recipe.XXXXXX)
mkdir -p "$work"
echo "bench-recipe: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $threads threads, work in $work, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Each run learns its config's tokenizer before its clock starts; the encoded-corpus cache is
# shared (keyed by the tokenizer), so a config whose tokenizer another has learned encodes nothing.
IFS=, read -r -a config_list <<< "$configs"
runs=()
for name in "${config_list[@]}"; do
  run=$work/$name
  rm -rf "$run"
  start=$(date +%s)
  "$heed" -q --threads "$threads" train -c "configs/$name.json" -m "$run" \
    "${corpus_sets[@]}" \
    --set "data.cache_dir=$work/cache" "${sets[@]}" \
    > "$run.log" 2>&1
  trained=$(($(date +%s) - start))
  scores=()
  for split in dev test; do
    "$heed" -q --threads "$threads" translate -m "$run" -i "$corpus/$split.en" -o "$run/$split.hyp"
    scores+=("$("$heed" bleu -i "$run/$split.hyp" "$corpus/$split.de" | sed -n 's/^BLEU[^ ]* = \([0-9.]*\) .*/\1/p')")
  done
  python3 - "$run" "$name" "$trained" "${scores[@]}" <<'PY'
import json, sys
run, name, secs, dev, test = sys.argv[1:]
recs = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
steps = max(r.get("step", 0) for r in recs)
valid = [r for r in recs if r.get("type") == "valid" and "bleu" in r]
best = max(valid, key=lambda r: r["bleu"]) if valid else None
beam = json.load(open(f"{run}/config.json"))["decoding"]["beam"]
secs = int(secs)
print(f"{name}: {steps} updates, {secs // 60} min {secs % 60} s with the validations; beam {beam}: dev BLEU {dev}, test BLEU {test}")
if best:
    print(f"  best greedy dev BLEU during training {best['bleu']:.2f} at step {best['step']}")
for r in recs:
    if r.get("type") == "average":
        print(f"  mean of {r['checkpoints']}: greedy dev BLEU {r.get('bleu', 0):.2f}, {'kept' if r['kept'] else 'not kept'}")
PY
  runs+=("$run")
done
"$heed" -q plot -o "$work/curves.svg" "${runs[@]}" "${compare[@]}"
echo "curves: $work/curves.svg"
echo "bench-recipe: load average after $(cut -d' ' -f1-3 /proc/loadavg)"
