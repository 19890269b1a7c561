#!/usr/bin/env bash
# GAT at scale: random graphs (scripts/make-graph.py: uniform edges, 128 features with 16
# non-zeros per node, 7 classes) of 100,000 nodes / 1,000,000 edges and 1,000,000 nodes /
# 10,000,000 edges, the model of configs/gat-cora.json trained EPOCHS epochs with THREADS
# threads. Per size: seconds per training epoch (forward + backward + Adam, heed's own median),
# seconds per epoch with the validation pass (from metrics.jsonl), wall time of the whole run,
# and peak resident memory (/usr/bin/time -v), with memory per edge to show the growth.
#
#   scripts/gat-scale.sh [OUT] [EPOCHS]          defaults: runs/gat-scale 3
#
# Environment: HEED (default build/heed), THREADS (default 2), PYTHON (default python3, for the
# generator), SIZES (default "100000:1000000 1000000:10000000", NODES:EDGES pairs). Graphs are
# generated once into OUT and reused. Timings need a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-runs/gat-scale}
epochs=${2:-3}
heed=${HEED:-build/heed}
threads=${THREADS:-2}
python=${PYTHON:-python3}
sizes=${SIZES:-100000:1000000 1000000:10000000}
[[ -x $heed ]] || { echo "gat-scale.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "gat-scale.sh: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
[[ $epochs =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/gat-scale.sh [OUT] [EPOCHS]" >&2; exit 2; }
mkdir -p "$out"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

printf '%10s %11s %14s %12s %14s %10s %12s %11s\n' nodes edges "attn entries" "train s/ep" "with val s/ep" "run s" "peak RSS MB" "RSS B/entry"
for size in $sizes; do
  nodes=${size%%:*} edges=${size##*:}
  graph=$out/graph-$nodes-$edges model=$out/model-$nodes-$edges
  if [[ ! -f $graph/test.txt ]]; then
    echo "generating $graph" >&2
    "$python" scripts/make-graph.py "$graph" "$nodes" "$edges"
  fi
  rm -rf "$model"
  /usr/bin/time -v -o "$out/time-$nodes-$edges.txt" "$heed" --threads "$threads" train -c configs/gat-cora.json -m "$model" \
    --set data.graph="$graph" --set training.max_epochs="$epochs" --set training.patience=0 \
    > "$out/result-$nodes-$edges.txt" 2> "$out/log-$nodes-$edges.txt"
  train_s=$(sed -n 's/.*; \([0-9.]*\) ms per training epoch).*/\1/p' "$out/result-$nodes-$edges.txt" | awk '{ printf "%.2f", $1 / 1000 }')
  # elapsed at each epoch's record: the differences are whole epochs (training step + validation)
  epoch_s=$(grep '"type":"epoch"' "$model/metrics.jsonl" | sed 's/.*"elapsed":\([0-9.e+-]*\).*/\1/' |
    awk 'NR > 1 { d[++n] = $1 - prev } { prev = $1 } END { if (n == 0) { print "-"; exit }
         for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
         printf "%.2f", d[int((n + 1) / 2)] }')
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$out/time-$nodes-$edges.txt")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)/\1/p' "$out/time-$nodes-$edges.txt" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; printf "%.1f", s }')
  entries=$((2 * edges + nodes))  # both directions of every edge, and the self-loops
  printf '%10d %11d %14d %12s %14s %10s %12.0f %11.0f\n' "$nodes" "$edges" "$entries" "$train_s" "$epoch_s" "$wall" \
    "$(awk -v k="$rss_kb" 'BEGIN { print k / 1024 }')" "$(awk -v k="$rss_kb" -v e="$entries" 'BEGIN { print k * 1024 / e }')"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $threads threads, $epochs epochs; logs in $out" >&2
