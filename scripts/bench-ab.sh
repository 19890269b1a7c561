#!/usr/bin/env bash
# Two heed builds side by side: training throughput and translation speed of build B against
# build A on the same data, the same configs and the same model, run alternately (A B A B ...),
# with the ratio B/A taken pair by pair and its median reported, so that a machine whose speed
# drifts still gives a fair figure. For "this change costs no speed": A is the build before it.
#
#   scripts/bench-ab.sh HEED_A HEED_B [--pairs 5] [--steps 60] [--warmup 10] [--threads 2]
#                       [--archs gru-bahdanau,transformer] [--work DIR]
#                       [--b-train-args ARGS] [--b-translate-args ARGS]
#
# The same build twice with B's extra arguments compares two settings of one build, e.g. bf16
# against fp32: HEED HEED --b-train-args "--set training.precision=bf16" --b-translate-args
# "--precision bf16".
#
# Training: configs/<arch>.json (model sizes as shipped, batches of 2,000 padded tokens) on
# data/train.*, a tokenizer of 8000 pieces learned once and given to both, --steps updates after
# --warmup; throughput = target tokens of the timed updates / their seconds, read from each run's
# metrics.jsonl (start-up and the warm-up excluded). Translation: a model trained by A (so that
# both builds read its config), data/dev.en translated greedily and with beam 5; seconds of the
# whole command.
# Prints one row per measurement: A's and B's medians (tokens/s, or seconds for translation) and
# the median of the speed ratio B/A (> 1: B is faster).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/bench-ab.sh HEED_A HEED_B [--pairs N] [--steps N] [--warmup N] [--threads N] [--archs LIST] [--work DIR] [--b-train-args ARGS] [--b-translate-args ARGS]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
heed_a=$(realpath "$1") heed_b=$(realpath "$2")
shift 2
pairs=5 steps=60 warmup=10 threads=2 archs=gru-bahdanau,transformer work= b_train_args= b_translate_args=
while [[ $# -gt 0 ]]; do
  case $1 in
    --pairs) pairs=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --archs) archs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --b-train-args) b_train_args=$2; shift 2 ;;
    --b-translate-args) b_translate_args=$2; shift 2 ;;
    *) usage ;;
  esac
done
for h in "$heed_a" "$heed_b"; do [[ -x $h ]] || { echo "bench-ab.sh: $h is not an executable" >&2; exit 2; }; done
[[ -n $work ]] || work=$(mktemp -d /tmp/heed-bench-ab.XXXXXX)
mkdir -p "$work"
echo "bench-ab: A = $heed_a, B = $heed_b, $pairs pairs, $threads threads, work in $work" >&2
echo "bench-ab: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$heed_a" -q tokenizer train --vocab-size 8000 -o "$work/tokenizer.json" data/train.en data/train.de

# The training config of ARCH for STEPS updates, logging every WARMUP: only fields both builds know.
train_config() {
  local arch=$1 total=$2
  python3 - "$arch" "$total" "$warmup" "$work" <<'EOF'
import json, sys
arch, total, every, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = json.load(open(f"configs/{arch}.json"))
c.pop("model_dir", None)
c["data"].pop("dev", None)
c["tokenizer"] = {"path": f"{work}/tokenizer.json"}
t = c["training"]
# The benchmark's batch is 2,000 padded tokens, whatever the recipe's (the README's figures were
# measured so).
t.update({"max_steps": total, "max_time": 0, "log_every": every, "validate_every": total, "keep_last": 1,
          "batch_tokens": 2000})
for key in [k for k in t if k not in ("optimizer", "learning_rate", "schedule", "warmup_steps", "clip_norm",
                                      "label_smoothing", "batch_tokens", "max_steps", "max_time", "log_every",
                                      "validate_every", "keep_last")]:
    t.pop(key)
c.pop("decoding", None)
json.dump(c, sys.stdout, indent=1)
EOF
}

# Target tokens per second of the updates after the warm-up, from a run's metrics.jsonl.
throughput() {
  python3 - "$1/metrics.jsonl" "$warmup" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
recs = [r for r in recs if r["type"] == "train"]
first = next(r for r in recs if r["step"] == int(sys.argv[2]))
timed = [r for r in recs if r["step"] > first["step"]]
seconds = timed[-1]["elapsed"] - first["elapsed"]
# A window's tokens: its tokens_per_s times its seconds; the windows tile the timed span.
prev = first["elapsed"]
tokens = 0.0
for r in timed:
    tokens += r["tokens_per_s"] * (r["elapsed"] - prev)
    prev = r["elapsed"]
print(f"{tokens / seconds:.1f}")
EOF
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
row() {  # NAME, then A's values, B's values and the ratios, one file each
  printf '%-34s A %10s   B %10s   B/A %s (pairs: %s)\n' "$1" "$(median < "$2")" "$(median < "$3")" \
    "$(median < "$4")" "$(tr '\n' ' ' < "$4" | sed 's/ $//')"
}

results=()
IFS=, read -r -a arch_list <<< "$archs"
for arch in "${arch_list[@]}"; do
  train_config "$arch" $((warmup + steps)) > "$work/$arch.json"
  : > "$work/$arch.a" ; : > "$work/$arch.b" ; : > "$work/$arch.ratio"
  for ((p = 1; p <= pairs; ++p)); do
    for side in a b; do
      heed=$heed_a extra=(); [[ $side == b ]] && { heed=$heed_b; read -r -a extra <<< "$b_train_args"; }
      rm -rf "$work/$arch-$side"
      "$heed" -q --threads "$threads" train -c "$work/$arch.json" -m "$work/$arch-$side" "${extra[@]}" > /dev/null
      throughput "$work/$arch-$side" >> "$work/$arch.$side"
    done
    paste <(tail -n 1 "$work/$arch.a") <(tail -n 1 "$work/$arch.b") | awk '{printf "%.3f\n", $2 / $1}' >> "$work/$arch.ratio"
    echo "bench-ab: $arch training pair $p: A $(tail -n 1 "$work/$arch.a") B $(tail -n 1 "$work/$arch.b") tokens/s" >&2
  done
  results+=("$(row "$arch training (target tokens/s)" "$work/$arch.a" "$work/$arch.b" "$work/$arch.ratio")")

  # Translation speed: A's last model, both builds, greedy and beam 5.
  model=$work/$arch-a
  for beam in 1 5; do
    name=$arch-beam$beam
    : > "$work/$name.a" ; : > "$work/$name.b" ; : > "$work/$name.ratio"
    for ((p = 1; p <= pairs; ++p)); do
      for side in a b; do
        heed=$heed_a extra=(); [[ $side == b ]] && { heed=$heed_b; read -r -a extra <<< "$b_translate_args"; }
        start=$(date +%s.%N)
        "$heed" -q --threads "$threads" translate -m "$model" --beam "$beam" -i data/dev.en -o "$work/$name.$side.out" "${extra[@]}"
        end=$(date +%s.%N)
        awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f\n", e - s}' >> "$work/$name.$side"
      done
      cmp -s "$work/$name.a.out" "$work/$name.b.out" || echo "bench-ab: note: $name translations differ between A and B" >&2
      # the speed ratio B/A: A's seconds over B's
      paste <(tail -n 1 "$work/$name.a") <(tail -n 1 "$work/$name.b") | awk '{printf "%.3f\n", $1 / $2}' >> "$work/$name.ratio"
    done
    results+=("$(row "$arch translate beam $beam (seconds)" "$work/$name.a" "$work/$name.b" "$work/$name.ratio")")
  done
done
echo "bench-ab: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf '%s\n' "${results[@]}"
