#!/bin/sh
# Decoding speed of `heed translate`: sentences/s and output tokens/s (search time only, as
# heed logs them), beam 1 and beam 5, a few runs each, with the load average alongside.
# Usage: scripts/bench-translate.sh MODEL_DIR [INPUT (default data/dev.en)] [RUNS (default 3)] [THREADS (default 1)]
set -eu
model=${1:?usage: $0 MODEL_DIR [INPUT] [RUNS] [THREADS]}
input=${2:-data/dev.en}
runs=${3:-3}
threads=${4:-1}
heed=${HEED:-build/heed}
uptime
for beam in 1 5; do
  i=0
  while [ "$i" -lt "$runs" ]; do
    line=$("$heed" --threads "$threads" translate -m "$model" -i "$input" --beam "$beam" 2>&1 >/dev/null |
           grep 'translate:.*sentences/s')
    echo "beam $beam run $((i + 1)): ${line#*translate: }"
    i=$((i + 1))
  done
done
uptime
