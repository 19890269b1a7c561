#!/usr/bin/env bash
# A measured recipe sweep: one config trained with several variants of its settings, each for the
# same number of updates (a budget in steps, so the result does not depend on the machine's load),
# one thread per run and --lanes runs at a time (never more lanes than cores). Prints a table of
# the dev BLEU (greedy, as validated during training) per variant, and draws all learning curves
# in one picture (heed plot).
#
#   scripts/sweep.sh CORPUS_DIR -c CONFIG --steps N [--lanes 2] [--work DIR]
#                    [--validate-every 500] [--set KEY=VALUE ...]
#                    --variant NAME 'KEY=VALUE KEY=VALUE ...' [--variant ...]
#
# CORPUS_DIR holds train.{en,de} and dev.{en,de}. --set applies to every variant; a variant's own
# settings come after it. A step budget stands for a time budget: measure the updates a config
# makes in that time on the target machine (its metrics.jsonl) and sweep at that many.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/sweep.sh CORPUS_DIR -c CONFIG --steps N [--lanes L] [--work DIR] [--validate-every N] [--set KEY=VALUE ...] --variant NAME 'KEY=VALUE ...' ..." >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
corpus=$1; shift
config= steps= lanes=2 work= every=500 sets=() names=() variant_sets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -c) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --lanes) lanes=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --validate-every) every=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --variant) [[ $# -ge 3 ]] || usage; names+=("$2"); variant_sets+=("$3"); shift 3 ;;
    *) usage ;;
  esac
done
[[ -n $config && -n $steps && ${#names[@]} -gt 0 ]] || usage
source scripts/corpus-flags.sh
corpus_flags "$corpus"
heed=${HEED:-build/heed}
[[ -x $heed ]] || { echo "sweep.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
cores=$(nproc)
((lanes >= 1 && lanes <= cores)) || { echo "sweep.sh: --lanes must be 1..$cores (one thread per run)" >&2; exit 2; }
[[ -n $work ]] || work=$(mktemp -d /tmp/heed-sweep.XXXXXX)
mkdir -p "$work"
echo "sweep: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $config, $steps updates per variant, $lanes at a time, work in $work, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# One tokenizer for every variant: WORK/tokenizer.json if there is one, else the one the first
# variant learns (the config's tokenizer section) before it writes the encoded-corpus cache.
tokenizer=$work/tokenizer.json
[[ -f $tokenizer ]] || tokenizer=

run_variant() {
  local name=$1 own=() kv
  for kv in $2; do own+=(--set "$kv"); done
  [[ -n $tokenizer ]] && own=(--set "tokenizer.path=$tokenizer" "${own[@]}")
  if ! OMP_NUM_THREADS=1 "$heed" -q --threads 1 train -c "$config" -m "$work/$name" \
    "${corpus_sets[@]}" --set "data.cache_dir=$work/cache" \
    --set "training.max_steps=$steps" --set "training.max_time=0" --set "training.validate_every=$every" \
    "${sets[@]}" "${own[@]}" > "$work/$name.log" 2>&1; then
    echo "sweep: variant $name failed, see $work/$name.log" >&2
    touch "$work/$name.failed"
  fi
}

# A second sweep in the same --work starts afresh: every variant's earlier run goes first, here,
# before any lane starts (a lane must not find the earlier first variant's tokenizer).
for name in "${names[@]}"; do rm -rf "${work:?}/$name" "$work/$name.log" "$work/$name.failed"; done

# The first run alone writes the encoded-corpus cache (and learns the tokenizer), so the lanes do
# not race for them.
run_variant "${names[0]}" "${variant_sets[0]}" &
first=$!
[[ -n $tokenizer ]] || tokenizer=$work/${names[0]}/tokenizer.json
while [[ ! -d $work/cache || ! -f $tokenizer ]] && kill -0 "$first" 2>/dev/null; do sleep 2; done
for ((i = 1; i < ${#names[@]}; i++)); do
  while (($(jobs -rp | wc -l) >= lanes)); do wait -n || true; done
  run_variant "${names[i]}" "${variant_sets[i]}" &
done
wait

python3 - "$work" "${names[@]}" <<'PY'
import json, os, sys
work, names = sys.argv[1], sys.argv[2:]
print("| variant | updates | time | dev BLEU (last) | dev BLEU (best) | at step |")
print("|---|---|---|---|---|---|")
for n in names:
    path = os.path.join(work, n, "metrics.jsonl")
    if os.path.exists(os.path.join(work, n + ".failed")) or not os.path.exists(path):
        print(f"| {n} | failed | | | | |")
        continue
    recs = [json.loads(l) for l in open(path)]
    valid = [r for r in recs if r.get("type") == "valid" and "bleu" in r]
    steps = max([r["step"] for r in recs if "step" in r] or [0])
    secs = max([r.get("elapsed", 0) for r in recs] or [0])
    if not valid:
        print(f"| {n} | {steps} | {secs / 60:.0f} min | | | |")
        continue
    best = max(valid, key=lambda r: r["bleu"])
    print(f"| {n} | {steps} | {secs / 60:.0f} min | {valid[-1]['bleu']:.2f} | {best['bleu']:.2f} | {best['step']} |")
PY
dirs=() failed=0
for n in "${names[@]}"; do
  if [[ -f $work/$n.failed ]]; then failed=$((failed + 1)); elif [[ -f $work/$n/metrics.jsonl ]]; then dirs+=("$work/$n"); fi
done
if [[ ${#dirs[@]} -gt 0 ]]; then "$heed" -q plot -o "$work/curves.svg" "${dirs[@]}" && echo "curves: $work/curves.svg"; fi
echo "sweep: load average after $(cut -d' ' -f1-3 /proc/loadavg)"
if ((failed > 0)); then echo "sweep: $failed variant(s) failed" >&2; exit 1; fi
