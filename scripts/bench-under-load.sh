#!/usr/bin/env bash
# heed's default thread settings on a shared machine: training updates in a fixed time and
# translation speed, alone and beside a busy neighbour (one process spinning on one core, for a
# bounded time), for four settings:
#
#   default    heed as shipped (the cores not busy elsewhere at start; OpenMP waits spin about
#              0.1 ms, GOMP_SPINCOUNT=10000)
#   before     all cores, libgomp's own spinning (GOMP_SPINCOUNT=300000, about 3 ms): heed before
#   one        --threads 1
#   passive    --threads 2, OMP_WAIT_POLICY=passive
#
#   scripts/bench-under-load.sh [--seconds N] [--repeats R] [--lines L] [--prepare P] [--only TASK]
#
# Defaults: 45 s of training per run (configs/quickstart.json), 3 repeats (medians), 300 lines of
# data/test.en per translation run, translated with a model trained for P = 60 s first. Prints each figure and the targets: with the neighbour, the
# default reaches >= 90 % of the best of {one, passive}; alone, >= 97 % of before. Run it on an
# otherwise idle machine: other load changes every figure. Environment: HEED (default
# build/heed). Needs taskset (util-linux). --only train|translate measures that task alone (a
# translation run takes a second, so its repeats are cheap).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=45 repeats=3 lines=300 prepare=60
tasks=(train translate)
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --prepare) prepare=$2; shift 2 ;;
    --only)
      [[ $2 == train || $2 == translate ]] || { echo "bench-under-load.sh: --only takes train or translate" >&2; exit 2; }
      tasks=("$2"); shift 2 ;;
    *) echo "usage: scripts/bench-under-load.sh [--seconds N] [--repeats R] [--lines L] [--prepare P] [--only TASK]" >&2; exit 2 ;;
  esac
done
for v in "$seconds" "$repeats" "$lines" "$prepare"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-under-load.sh: expected positive integers, got '$v'" >&2; exit 2; }
done
heed=$(realpath "${HEED:-build/heed}")
[[ -x $heed ]] || { echo "bench-under-load.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
command -v taskset > /dev/null || { echo "bench-under-load.sh: taskset not found (Debian package util-linux)" >&2; exit 2; }

work=$(mktemp -d -t heed-bench-load.XXXXXX)
neighbour=""
cleanup() {
  if [[ -n $neighbour ]]; then kill "$neighbour" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

settings=(default before one passive)
# Runs heed with a setting's environment and flags.
with_setting() {
  local setting=$1
  shift
  case $setting in
    default) env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u HEED_THREADS "$heed" "$@" ;;
    before) env -u OMP_WAIT_POLICY -u HEED_THREADS GOMP_SPINCOUNT=300000 "$heed" --threads "$(nproc)" "$@" ;;
    one) env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY "$heed" --threads 1 "$@" ;;
    passive) env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive "$heed" --threads 2 "$@" ;;
  esac
}

# A busy loop on core 0 for at most `seconds` seconds.
start_neighbour() {
  taskset -c 0 bash -c "end=\$((SECONDS + $1)); while ((SECONDS < end)); do :; done" &
  neighbour=$!
  sleep 0.5
}
stop_neighbour() {
  kill "$neighbour" 2> /dev/null || true
  wait "$neighbour" 2> /dev/null || true
  neighbour=""
}

# Once: the tokenizer, the encoded corpus and a model to translate with, shared by every run.
echo "bench-under-load: preparing (a ${prepare} s training run)" >&2
"$heed" -q train -c configs/quickstart.json -m "$work/prepared" --set training.max_time="$prepare" \
  --set data.cache_dir="$work/cache"
head -n "$lines" data/test.en > "$work/input.txt"
common=(--set tokenizer.path="$work/prepared/tokenizer.json" --set data.cache_dir="$work/cache"
        --set training.max_time="$seconds" --set data.dev.src= --set data.dev.tgt=)

# Updates in `seconds` of training.
train_steps() {
  local setting=$1 dir=$work/run
  rm -rf "$dir"
  with_setting "$setting" train -c configs/quickstart.json -m "$dir" "${common[@]}" 2> "$work/train.log"
  sed -n 's/.*training stopped (max_time) after \([0-9]*\) steps.*/\1/p' "$work/train.log" | tail -n 1
}
# Sentences per second translating the input (beam 5, greedy models' default from the config).
translate_rate() {
  local setting=$1 start end
  start=$(date +%s.%N)
  with_setting "$setting" -q translate -m "$work/prepared" -i "$work/input.txt" -o /dev/null
  end=$(date +%s.%N)
  awk -v n="$lines" -v s="$start" -v e="$end" 'BEGIN { printf "%.2f\n", n / (e - s) }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

declare -A figures
for load in alone neighbour; do
  for task in train translate; do
    for setting in "${settings[@]}"; do : > "$work/$load-$task-$setting"; done
  done
done
for ((r = 1; r <= repeats; ++r)); do
  for load in alone neighbour; do
    for setting in "${settings[@]}"; do  # alternating, so that slow drifts hit every setting alike
      [[ $load == neighbour ]] && start_neighbour $((seconds + 120))
      for task in "${tasks[@]}"; do
        case $task in
          train) train_steps "$setting" >> "$work/$load-train-$setting" ;;
          translate) translate_rate "$setting" >> "$work/$load-translate-$setting" ;;
        esac
      done
      [[ $load == neighbour ]] && stop_neighbour
      echo "bench-under-load: repeat $r, $load, $setting: $(tail -n 1 "$work/$load-train-$setting") updates," \
        "$(tail -n 1 "$work/$load-translate-$setting") sentences/s" >&2
    done
  done
done

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-10s %12s %12s %12s %12s\n' task load "${settings[@]}"
status=0
for task in "${tasks[@]}"; do
  for load in alone neighbour; do
    row=()
    for setting in "${settings[@]}"; do
      figures[$task-$load-$setting]=$(median < "$work/$load-$task-$setting")
      row+=("${figures[$task-$load-$setting]}")
    done
    printf '%-10s %-10s %12s %12s %12s %12s\n' "$task" "$load" "${row[@]}"
  done
  ratios=$(awk -v d="${figures[$task-neighbour-default]}" -v o="${figures[$task-neighbour-one]}" \
    -v p="${figures[$task-neighbour-passive]}" -v a="${figures[$task-alone-default]}" \
    -v b="${figures[$task-alone-before]}" 'BEGIN {
      best = (o > p) ? o : p
      printf "%.3f %.3f", d / best, a / b }')
  loaded=${ratios% *} alone=${ratios#* }
  verdict_loaded=$(awk -v x="$loaded" 'BEGIN { print ((x >= 0.90) ? "ok" : "MISSED") }')
  verdict_alone=$(awk -v x="$alone" 'BEGIN { print ((x >= 0.97) ? "ok" : "MISSED") }')
  echo "$task: with the neighbour, default / best of {one, passive} = $loaded (target >= 0.90: $verdict_loaded);" \
    "alone, default / before = $alone (target >= 0.97: $verdict_alone)"
  [[ $verdict_loaded == ok && $verdict_alone == ok ]] || status=1
done
exit $status
