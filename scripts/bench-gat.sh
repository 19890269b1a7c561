#!/usr/bin/env bash
# GAT on Cora: heed beside the PyTorch reference (torch_gat.py, the authors' model in PyTorch),
# one thread each, run alternately: training milliseconds per epoch (forward + backward + Adam;
# the median over EPOCHS epochs after 5 warm-up ones, in both programs), PAIRS times, then each
# program's median and the median of the per-pair ratios reference / heed. With ACCURACY=N, also
# the test accuracy of both over seeds 1 … N (the paper's protocol; minutes per seed each).
#
#   scripts/bench-gat.sh TORCH_GAT_PY [PAIRS] [EPOCHS]       defaults: 5 pairs, 200 epochs
#
# Environment: HEED (default build/heed), PYTHON (default /usr/bin/python3: Debian's python3-torch),
# ACCURACY (default 0). Timings need a quiet machine: with other work running, both programs
# slow down by different factors.
set -euo pipefail
shopt -s inherit_errexit  # a command failing inside $(...) stops the script: no figure from a failed run
cd "$(dirname "$0")/.."

reference=${1:-}
pairs=${2:-5}
epochs=${3:-200}
heed=${HEED:-build/heed}
python=${PYTHON:-/usr/bin/python3}
accuracy=${ACCURACY:-0}
[[ -f $reference ]] || { echo "usage: scripts/bench-gat.sh TORCH_GAT_PY [PAIRS] [EPOCHS] (the reference's path)" >&2; exit 2; }
[[ $pairs =~ ^[1-9][0-9]*$ && $epochs =~ ^[1-9][0-9]*$ ]] || { echo "bench-gat.sh: PAIRS and EPOCHS are counts" >&2; exit 2; }
[[ -x $heed ]] || { echo "bench-gat.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
"$python" -c 'import torch' 2>/dev/null || { echo "bench-gat.sh: $python cannot import torch (apt-get install python3-torch)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

heed_ms() {
  rm -rf "$work/model"
  "$heed" --threads 1 -q train -c configs/gat-cora.json -m "$work/model" \
    --set training.max_epochs=$((epochs + 5)) --set training.patience=0 |
    sed -n 's/.*; \([0-9.]*\) ms per training epoch).*/\1/p'
}
reference_ms() {
  "$python" "$reference" time --data data/cora --epochs "$epochs" --threads 1 --json "$work/reference.json" > /dev/null
  "$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["train_ms_per_epoch_median"])' "$work/reference.json"
}

printf '%-5s %12s %12s %8s\n' pair "heed ms" "torch ms" ratio
heed_all=() reference_all=() ratios=()
for ((p = 1; p <= pairs; ++p)); do
  if ((p % 2)); then h=$(heed_ms); r=$(reference_ms); else r=$(reference_ms); h=$(heed_ms); fi
  ratio=$(awk -v h="$h" -v r="$r" 'BEGIN { printf "%.2f", r / h }')
  printf '%-5s %12.2f %12.2f %8s\n' "$p" "$h" "$r" "$ratio"
  heed_all+=("$h") reference_all+=("$r") ratios+=("$ratio")
done
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = v[(NR + 1) / 2]; if (NR % 2 == 0) m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m }'
}
echo "medians: heed $(median "${heed_all[@]}") ms, reference $(median "${reference_all[@]}") ms per training epoch;" \
  "median ratio reference/heed $(median "${ratios[@]}")x (one thread each, $epochs epochs, $pairs pairs)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if ((accuracy > 0)); then
  echo "test accuracy, seeds 1 … $accuracy:"
  echo "  heed:      $(scripts/gat-cora-seeds.sh "$accuracy" 1 "$work/seeds" | tail -1)"
  echo "  reference: $("$python" "$reference" train --data data/cora --seed 1 --runs "$accuracy" --threads 1 | tail -1)"
fi
