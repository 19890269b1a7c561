#!/usr/bin/env bash
# A measured recipe sweep: one config trained with several variants of its settings, each for the
# same number of updates (a budget in steps, so the result does not depend on the machine's load),
# one thread per run and --lanes runs at a time (never more lanes than cores). Prints a table of
# the dev BLEU (greedy, as validated during training) per variant, and draws all learning curves
# in one picture (heed plot).
#
#   scripts/sweep.sh CORPUS_DIR -c CONFIG --steps N [--lanes 2] [--work DIR]
#                    [--validate-every 500] [--set KEY=VALUE ...]
#                    [--equal-time [--pace-threads T] [--pace-steps 60] [--pace-rounds 3] [--pace-only]]
#                    [--continue]
#                    --variant NAME 'KEY=VALUE KEY=VALUE ...' [--variant ...]
#
# CORPUS_DIR holds train.{en,de} and dev.{en,de}. --set applies to every variant; a variant's own
# settings come after it. A step budget stands for a time budget: measure the updates a config
# makes in that time on the target machine (its metrics.jsonl) and sweep at that many.
#
# --equal-time is for variants that change the cost of an update (batch size, model size): N is
# then the config's own update count, and each variant trains for the updates it would make in
# the config's time, N x (the config's seconds per update / the variant's). The seconds per
# update are measured first, at T threads (default: every core, the budget's thread count), over
# --pace-steps updates after 20 warm-up updates, the config and the variants in turn, and the
# median of --pace-rounds rounds is taken; the machine is shared by nothing else meanwhile. The
# runs themselves keep one thread each and count updates, so their results do not depend on load.
# --pace-only stops after the measurement (to run two sweeps' variants side by side, give each
# variant its measured count as its own training.max_steps).
#
# --continue takes up a sweep that was stopped (a long budget outlasts a sitting): in the same
# --work, with the same arguments, a finished variant is kept, a stopped one resumes exactly from
# its last checkpoint (heed train --resume), and the paces measured before are used again.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/sweep.sh CORPUS_DIR -c CONFIG --steps N [--lanes L] [--work DIR] [--validate-every N] [--set KEY=VALUE ...] [--equal-time [--pace-threads T] [--pace-steps N] [--pace-rounds N] [--pace-only]] [--continue] --variant NAME 'KEY=VALUE ...' ..." >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
corpus=$1; shift
config= steps= lanes=2 work= every=500 sets=() names=() variant_sets=()
equal_time=0 pace_threads=$(nproc) pace_steps=60 pace_rounds=3 pace_only=0 continue_sweep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    -c) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --lanes) lanes=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --validate-every) every=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --equal-time) equal_time=1; shift ;;
    --pace-threads) pace_threads=$2; shift 2 ;;
    --pace-steps) pace_steps=$2; shift 2 ;;
    --pace-rounds) pace_rounds=$2; shift 2 ;;
    --pace-only) equal_time=1 pace_only=1; shift ;;
    --continue) continue_sweep=1; shift ;;
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
budget="$steps updates per variant"
((equal_time)) && budget="the time of $steps updates of the config"
echo "sweep: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $config, $budget, $lanes at a time, work in $work, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# One tokenizer for every variant: WORK/tokenizer.json if there is one, else the one the first
# variant learns (the config's tokenizer section) before it writes the encoded-corpus cache.
tokenizer=$work/tokenizer.json
[[ -f $tokenizer ]] || tokenizer=

# The --set flags of the settings $1 (KEY=VALUE ...), after the sweep's tokenizer, in own_flags.
settings_flags() {
  local kv
  own_flags=()
  [[ -n $tokenizer ]] && own_flags=(--set "tokenizer.path=$tokenizer")
  for kv in $1; do own_flags+=(--set "$kv"); done
}

# Trains variant number $1 for its update budget (with --continue: resumes it, or leaves it be
# when it has finished).
run_variant() {
  local name=${names[$1]} resume=() own_flags
  [[ -f $work/$name.done ]] && return
  [[ -f $work/$name/trainer_state.safetensors ]] && resume=(--resume)
  settings_flags "${variant_sets[$1]}"
  if OMP_NUM_THREADS=1 "$heed" -q --threads 1 train -c "$config" -m "$work/$name" "${resume[@]}" \
    "${corpus_sets[@]}" --set "data.cache_dir=$work/cache" \
    --set "training.max_steps=${variant_steps[$1]}" --set "training.max_time=0" --set "training.validate_every=$every" \
    "${sets[@]}" "${own_flags[@]}" >> "$work/$name.log" 2>&1; then
    touch "$work/$name.done"
  else
    echo "sweep: variant $name failed, see $work/$name.log" >&2
    touch "$work/$name.failed"
  fi
}

# A second sweep in the same --work starts afresh: every variant's earlier run goes first, here,
# before any lane starts (a lane must not find the earlier first variant's tokenizer). With
# --continue only a failed variant's run goes.
for name in "${names[@]}"; do
  if ((continue_sweep)) && [[ ! -f $work/$name.failed ]]; then continue; fi
  rm -rf "${work:?}/$name" "$work/$name.log" "$work/$name.failed" "$work/$name.done"
done

# Each variant's update budget: --steps, or with --equal-time --steps scaled by the measured pace.
variant_steps=()
for name in "${names[@]}"; do variant_steps+=("$steps"); done

# Seconds per update of the config with the settings $2 (KEY=VALUE ...) at --pace-threads
# threads, from the train records of a short run in $1 (no dev set: nothing but updates is timed).
pace_run() {
  local dir=$1 own_flags
  settings_flags "$2"
  rm -rf "$dir"
  if ! OMP_NUM_THREADS=$pace_threads "$heed" -q --threads "$pace_threads" train -c "$config" -m "$dir" \
    "${corpus_sets[@]}" --set data.dev.src= --set data.dev.tgt= --set "data.cache_dir=$work/cache" \
    --set "training.max_steps=$((20 + pace_steps))" --set training.max_time=0 --set training.log_every=20 \
    --set training.average_last=0 "${sets[@]}" "${own_flags[@]}" > "$dir.log" 2>&1; then
    echo "sweep: pace run failed, see $dir.log" >&2
    exit 1
  fi
  python3 - "$dir/metrics.jsonl" <<'PY'
import json, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "train"]
first = next(r for r in recs if r["step"] >= 20)
print(f"{(recs[-1]['elapsed'] - first['elapsed']) / (recs[-1]['step'] - first['step']):.6f}")
PY
}

# With --continue, the paces of the stopped sweep when they cover every variant.
paces_known=0
if ((equal_time && continue_sweep)) && [[ -f $work/pace.tsv ]]; then
  paces_known=1
  for name in config "${names[@]}"; do cut -f1 "$work/pace.tsv" | grep -qxF "$name" || paces_known=0; done
fi

if ((equal_time && !paces_known)); then
  ((pace_threads >= 1 && pace_threads <= cores && pace_steps >= 20 && pace_rounds >= 1)) || usage
  mkdir -p "$work/pace"
  : > "$work/pace.tsv"
  for ((round = 1; round <= pace_rounds; round++)); do
    pace_config=$(pace_run "$work/pace/config" "")
    printf 'config\t%s\t%s\n' "$round" "$pace_config" >> "$work/pace.tsv"
    if [[ -z $tokenizer ]]; then
      cp "$work/pace/config/tokenizer.json" "$work/tokenizer.json"
      tokenizer=$work/tokenizer.json
    fi
    for ((i = 0; i < ${#names[@]}; i++)); do
      pace=$(pace_run "$work/pace/${names[i]}" "${variant_sets[i]}")
      printf '%s\t%s\t%s\n' "${names[i]}" "$round" "$pace" >> "$work/pace.tsv"
    done
  done
  rm -rf "$work/pace"
fi
if ((equal_time)); then
  # The medians, and each variant's updates in the config's time.
  mapfile -t variant_steps < <(python3 - "$work/pace.tsv" "$steps" "$pace_threads" "${names[@]}" <<'PY'
import statistics, sys
path, steps, threads, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
paces = {}
for line in open(path):
    name, _, secs = line.split("\t")
    paces.setdefault(name, []).append(float(secs))
median = {n: statistics.median(v) for n, v in paces.items()}
print(f"sweep: seconds per update at {threads} threads (median of {len(paces['config'])}): config {median['config']:.3f}", file=sys.stderr)
for n in names:
    n_steps = round(steps * median["config"] / median[n])
    print(f"sweep:   {n} {median[n]:.3f} ({' '.join(f'{p:.3f}' for p in paces[n])}): {n_steps} updates in the config's {steps}", file=sys.stderr)
    print(n_steps)
PY
  )
  ((pace_only)) && exit 0
fi

# The first run alone writes the encoded-corpus cache (and learns the tokenizer), so the lanes do
# not race for them.
run_variant 0 &
first=$!
[[ -n $tokenizer ]] || tokenizer=$work/${names[0]}/tokenizer.json
while [[ ! -d $work/cache || ! -f $tokenizer ]] && kill -0 "$first" 2>/dev/null; do sleep 2; done
for ((i = 1; i < ${#names[@]}; i++)); do
  while (($(jobs -rp | wc -l) >= lanes)); do wait -n || true; done
  run_variant "$i" &
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
