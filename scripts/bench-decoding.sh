#!/usr/bin/env bash
# int8, bf16 and ensemble decoding side by side with fp32 single-model decoding, on trained models.
#
#   scripts/bench-decoding.sh --src DEV_SRC --ref DEV_REF --models A[,B] [--lines 1000]
#                             [--pairs 3] [--threads 1] [--beams 1,5] [--work DIR]
#                             [--only int8|bf16|ensemble]
#
# int8: each model is quantized (heed quantize) and the first --lines of DEV_SRC are translated
# with the fp32 model and its int8 copy, alternately (fp32 int8 fp32 int8 ...), greedily and with
# beam 5. Speed = sentences/s of heed's closing `translate:` line (tokenizing, search and
# detokenizing; loading excluded); the int8/fp32 ratio is taken pair by pair and its median
# printed, so a machine whose speed drifts still gives a fair figure. BLEU (heed bleu, sacreBLEU's
# default) of both, and how many output lines are identical.
# bf16 (on a CPU with avx512_bf16): the same, the model with --precision bf16 against fp32.
# Ensemble: with two models (same tokenizer: e.g. one config, two seeds), A, A+B and B in turn, at
# each beam: the time ratio ensemble / A (< 2.1 wanted), and ensemble / the mean of A and B (the
# two models' outputs differ in length, and so does the search's work), and the BLEU of A, B and
# A+B.
# Figures depend on the CPU: the header names it and whether it has VNNI (without it, int8
# products use 7-bit weights and the slower non-VNNI int8 instructions).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/bench-decoding.sh --src DEV_SRC --ref DEV_REF --models A[,B] [--lines N] [--pairs N] [--threads N] [--beams 1,5] [--work DIR] [--only int8|bf16|ensemble]" >&2
  exit 2
}
src= ref= models= lines=1000 pairs=3 threads=1 beams=1,5 work= only=
while [[ $# -gt 0 ]]; do
  case $1 in
    --src) src=$2; shift 2 ;;
    --ref) ref=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --beams) beams=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ -n $src && -n $ref && -n $models ]] || usage
[[ -z $only || $only == int8 || $only == bf16 || $only == ensemble ]] || usage
heed=${HEED:-build/heed}
[[ -x $heed ]] || { echo "bench-decoding.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
[[ -n $work ]] || work=$(mktemp -d /tmp/heed-bench-decoding.XXXXXX)
mkdir -p "$work"
IFS=, read -r -a model_list <<< "$models"
IFS=, read -r -a beam_list <<< "$beams"
head -n "$lines" "$src" > "$work/src.txt"
head -n "$lines" "$ref" > "$work/ref.txt"

vnni=no bf16=no
grep -q -w -E 'avx512_vnni|avx_vnni' /proc/cpuinfo && vnni=yes
grep -q -w avx512_bf16 /proc/cpuinfo && bf16=yes
echo "bench-decoding: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), VNNI: $vnni, bf16: $bf16, $threads thread(s), $(wc -l < "$work/src.txt") sentences, $pairs pairs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# translate OUT ARGS...: runs heed translate, prints its sentences/s
translate() {
  local out=$1; shift
  "$heed" --threads "$threads" translate -i "$work/src.txt" -o "$out" "$@" 2> "$out.log" ||
    { echo "bench-decoding.sh: heed translate $* failed:" >&2; tail -n 5 "$out.log" >&2; exit 1; }
  sed -n 's/.*translate: .* in \([0-9.]*\) s: \([0-9.]*\) sentences\/s.*/\2/p' "$out.log" | tail -n 1
}
bleu() { "$heed" bleu "$work/ref.txt" -i "$1" --score-only 2> /dev/null; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
same_lines() { paste -d '\t' "$1" "$2" | awk -F '\t' '$1 == $2 {n++} END {print n + 0}'; }

# against_fp32 NAME TAG: the fp32 run (a_args) against the TAG run (b_args) at every beam, pairs
# alternating; one row per beam.
against_fp32() {
  local name=$1 tag=$2 beam a b
  for beam in "${beam_list[@]}"; do
    : > "$work/r"
    : > "$work/a"
    : > "$work/b"
    for ((i = 0; i < pairs; i++)); do
      a=$(translate "$work/$name-fp32-b$beam.txt" "${a_args[@]}" --beam "$beam")
      b=$(translate "$work/$name-$tag-b$beam.txt" "${b_args[@]}" --beam "$beam")
      echo "$a" >> "$work/a"
      echo "$b" >> "$work/b"
      awk -v a="$a" -v b="$b" 'BEGIN {print b / a}' >> "$work/r"
    done
    printf '%-26s %5s %12.1f %12.1f %7.2fx %9s %9s %6s/%s\n' "$name" "$beam" "$(median < "$work/a")" \
      "$(median < "$work/b")" "$(median < "$work/r")" "$(bleu "$work/$name-fp32-b$beam.txt")" \
      "$(bleu "$work/$name-$tag-b$beam.txt")" "$(same_lines "$work/$name-fp32-b$beam.txt" "$work/$name-$tag-b$beam.txt")" \
      "$(wc -l < "$work/src.txt")"
  done
}
header() { printf '\n%-26s %5s %12s %12s %8s %9s %9s %11s\n' "$1 against fp32" beam "fp32 sent/s" "$1 sent/s" ratio "BLEU fp32" "BLEU $1" "same lines"; }

if [[ -z $only || $only == int8 ]]; then
  header int8
  for m in "${model_list[@]}"; do
    name=$(basename "$m")
    q=$work/$name-int8
    rm -rf "$q"
    "$heed" quantize -m "$m" -o "$q" 2> "$work/$name-quantize.log" || { cat "$work/$name-quantize.log" >&2; exit 1; }
    a_args=(-m "$m") b_args=(-m "$q")
    against_fp32 "$name" int8
    ls -l "$m/model.safetensors" "$q/model.safetensors" | awk '{printf "  %s: %.2f MB\n", $NF, $5 / 1e6}'
  done
fi

if [[ $bf16 == yes && ( -z $only || $only == bf16 ) ]]; then
  header bf16
  for m in "${model_list[@]}"; do
    a_args=(-m "$m" --precision fp32) b_args=(-m "$m" --precision bf16)
    against_fp32 "$(basename "$m")" bf16
  done
fi

if [[ ${#model_list[@]} -ge 2 && ( -z $only || $only == ensemble ) ]]; then
  a=${model_list[0]} b=${model_list[1]}
  printf '\n%-26s %5s %8s %8s %8s %8s %10s %9s %9s %9s\n' "ensemble A+B against A" beam "A s" "B s" "A+B s" "time" "vs mean" "BLEU A" "BLEU B" "BLEU A+B"
  for beam in "${beam_list[@]}"; do
    : > "$work/r"
    : > "$work/rm"
    : > "$work/sa"
    : > "$work/sb"
    : > "$work/se"
    n=$(wc -l < "$work/src.txt")
    for ((i = 0; i < pairs; i++)); do
      x=$(translate "$work/A-b$beam.txt" -m "$a" --beam "$beam")
      y=$(translate "$work/AB-b$beam.txt" -m "$a" -m "$b" --beam "$beam")
      z=$(translate "$work/B-b$beam.txt" -m "$b" --beam "$beam")
      awk -v n="$n" -v x="$x" 'BEGIN {print n / x}' >> "$work/sa"
      awk -v n="$n" -v z="$z" 'BEGIN {print n / z}' >> "$work/sb"
      awk -v n="$n" -v y="$y" 'BEGIN {print n / y}' >> "$work/se"
      awk -v x="$x" -v y="$y" 'BEGIN {print x / y}' >> "$work/r"
      awk -v x="$x" -v y="$y" -v z="$z" 'BEGIN {print (1 / y) / ((1 / x + 1 / z) / 2)}' >> "$work/rm"
    done
    printf '%-26s %5s %8.2f %8.2f %8.2f %7.2fx %9.2fx %9s %9s %9s\n' "$(basename "$a") + $(basename "$b")" "$beam" \
      "$(median < "$work/sa")" "$(median < "$work/sb")" "$(median < "$work/se")" "$(median < "$work/r")" \
      "$(median < "$work/rm")" "$(bleu "$work/A-b$beam.txt")" "$(bleu "$work/B-b$beam.txt")" "$(bleu "$work/AB-b$beam.txt")"
  done
fi
echo "bench-decoding: load average after $(cut -d' ' -f1-3 /proc/loadavg); outputs and logs in $work"
