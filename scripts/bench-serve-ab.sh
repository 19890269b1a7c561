#!/usr/bin/env bash
# Two `heed serve` settings side by side on loopback: servers A and B (a heed build and its serve
# flags each) run at once, and load runs go to them in turn (A B A B ...), so that a machine whose
# speed drifts treats both alike; the ratio B/A of each pair and its median are printed. Used for
# the serving figures of the README (e.g. --max-wait-ms 0 against 10).
#
#   scripts/bench-serve-ab.sh MODEL_DIR [--pairs 7] [--clients 32] [--requests 3000]
#       [--measure sentences_per_second|mean|p50|p99] [--input FILE]
#       [--a-heed HEED] [--b-heed HEED] [--a-flags FLAGS] [--b-flags FLAGS]
#
# Sentences: --input (default data/test.en + data/dev.en), one per request; every answer is
# checked against `heed translate` of build A (never cut: --max-input-length and
# --max-sentence-length 1000). THREADS (default 2) is each server's --threads. The load client is
# build/heed-serve-load (built here, as scripts/bench-serve.sh does).
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '7,9p' "$0" | sed 's/^# *//' >&2; exit 2; }
[[ $# -ge 1 ]] || usage
model=$1; shift
pairs=7 clients=32 requests=3000 measure=sentences_per_second input=
a_heed=$root/build/heed b_heed=$root/build/heed a_flags= b_flags=
while [[ $# -gt 0 ]]; do
  case $1 in
    --pairs) pairs=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --measure) measure=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --a-heed) a_heed=$2; shift 2 ;;
    --b-heed) b_heed=$2; shift 2 ;;
    --a-flags) a_flags=$2; shift 2 ;;
    --b-flags) b_flags=$2; shift 2 ;;
    *) usage ;;
  esac
done
case $measure in sentences_per_second | mean | p50 | p99) ;; *) usage ;; esac
threads=${THREADS:-2}
load=$root/build/heed-serve-load
[[ -d $root/build ]] && cmake --build "$root/build" --target heed-serve-load > /dev/null
for tool in "$a_heed" "$b_heed" "$load"; do [[ -x $tool ]] || { echo "missing: $tool" >&2; exit 1; }; done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if [[ -n $input ]]; then cp "$input" "$work/sentences.txt"; else cat "$root/data/test.en" "$root/data/dev.en" > "$work/sentences.txt"; fi
"$a_heed" --threads "$threads" translate -m "$model" --max-input-length 1000 -i "$work/sentences.txt" \
  -o "$work/expect.txt" 2> "$work/translate.log"

# start NAME HEED FLAGS: a server on a free port; its address in $work/NAME.url
start() {
  # shellcheck disable=SC2086  # FLAGS are words
  "$2" --threads "$threads" serve -m "$model" --port 0 --max-sentence-length 1000 $3 > "$work/$1.url" 2> "$work/$1.log" &
  pids+=($!)
  for _ in $(seq 600); do [[ -s $work/$1.url ]] && return; sleep 0.1; done
  cat "$work/$1.log" >&2
  exit 1
}
start a "$a_heed" "$a_flags"
start b "$b_heed" "$b_flags"

# measure NAME REQUESTS: one load run; prints the measure (fails on an error or a wrong answer)
measure() {
  "$load" --url "$(head -1 "$work/$1.url")" -i "$work/sentences.txt" --expect "$work/expect.txt" \
    --clients "$clients" --requests "$2" > "$work/run.json"
  python3 - "$work/run.json" "$measure" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
if run["errors"] or run["mismatches"]:
    sys.exit(f"bench-serve-ab: {run['errors']} errors, {run['mismatches']} answers unlike translate's")
key = sys.argv[2]
print(run[key] if key in run else run["latency_ms"][key])
PY
}
measure a 500 > /dev/null  # warm-up: primitives, heap
measure b 500 > /dev/null
echo "bench-serve-ab: $clients clients, $requests requests a run, $measure; A: $a_heed $a_flags; B: $b_heed $b_flags"
ratios=()
for ((p = 1; p <= pairs; p++)); do
  a=$(measure a "$requests")
  b=$(measure b "$requests")
  ratio=$(python3 -c "print(f'{$b / $a:.4f}')")
  ratios+=("$ratio")
  echo "pair $p: A $a, B $b, B/A $ratio"
done
python3 -c "import statistics, sys; print(f'median B/A over {len(sys.argv) - 1} pairs: {statistics.median(map(float, sys.argv[1:])):.3f} (load average: ' + open('/proc/loadavg').read().split()[0] + ')')" "${ratios[@]}"
