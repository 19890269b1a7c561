#!/usr/bin/env bash
# GAT on Cora, the paper's protocol: train configs/gat-cora.json with seeds FIRST … FIRST+N−1
# (heed train --set seed=S, one model directory per seed under OUT) and print each seed's test
# accuracy, then their mean ± standard deviation.
#
#   scripts/gat-cora-seeds.sh [N] [FIRST] [OUT]      defaults: 10 1 runs/gat-cora-seeds
#
# Environment: HEED (default build/heed), CONFIG (default configs/gat-cora.json), THREADS
# (default 1: runs are independent of the thread count only up to float rounding).
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-10}
first=${2:-1}
out=${3:-runs/gat-cora-seeds}
heed=${HEED:-build/heed}
config=${CONFIG:-configs/gat-cora.json}
threads=${THREADS:-1}
[[ $n =~ ^[1-9][0-9]*$ && $first =~ ^[0-9]+$ ]] || { echo "usage: scripts/gat-cora-seeds.sh [N] [FIRST] [OUT]" >&2; exit 2; }
[[ -x $heed ]] || { echo "gat-cora-seeds.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }

mkdir -p "$out"
accuracies=()
for ((seed = first; seed < first + n; ++seed)); do
  dir=$out/seed-$seed
  rm -rf "$dir"
  line=$("$heed" --threads "$threads" -q train -c "$config" -m "$dir" --set seed="$seed")
  accuracy=$(sed -n 's/^test accuracy \([0-9.]*\) %.*/\1/p' <<<"$line")
  [[ -n $accuracy ]] || { echo "gat-cora-seeds.sh: no test accuracy in: $line" >&2; exit 1; }
  echo "seed $seed: $line"
  accuracies+=("$accuracy")
done
printf '%s\n' "${accuracies[@]}" | awk -v n="$n" '
  { x[NR] = $1; sum += $1; if (NR == 1 || $1 < lo) lo = $1; if (NR == 1 || $1 > hi) hi = $1 }
  END {
    mean = sum / n
    for (i = 1; i <= n; ++i) ss += (x[i] - mean) ^ 2
    sample = 0
    if (n > 1) sample = sqrt(ss / (n - 1))
    printf "test accuracy over %d seeds: %.2f ± %.2f %% (population std; sample std %.2f), range %.2f–%.2f %%\n",
           n, mean, sqrt(ss / n), sample, lo, hi
  }'
