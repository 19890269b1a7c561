#!/usr/bin/env bash
# Benchmark: corpus BLEU (default settings) of a 100k-line hypothesis with `heed bleu`, and with
# sacreBLEU side by side when it is installed (ratio of medians). Not a test.
#
#   scripts/bench-bleu.sh CORPUS_FILE [HEED_BINARY] [RUNS]
#
# CORPUS_FILE: any UTF-8 text, one sentence a line (e.g. a training corpus side). Its lines are
# repeated up to 100k as the reference; the hypothesis perturbs them (dropped, swapped,
# substituted and upper-cased words) so n-gram matching has real work to do.
set -euo pipefail
corpus=${1:?usage: bench-bleu.sh CORPUS_FILE [HEED_BINARY] [RUNS]}
heed=${2:-build/heed}
runs=${3:-5}
lines=100000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

awk -v n=$lines 'NF { buf[c++] = $0 } END { for (i = 0; i < n; i++) print buf[i % c] }' "$corpus" > "$work/ref.txt"
awk 'BEGIN { srand(7) }
{
  n = split($0, w, " ")
  out = ""
  for (i = 1; i <= n; i++) {
    r = rand()
    if (r < 0.05) continue                          # drop
    if (r < 0.10 && i < n) { t = w[i]; w[i] = w[i+1]; w[i+1] = t }  # swap with next
    else if (r < 0.14) w[i] = "xyz" int(rand() * 50) # substitute
    else if (r < 0.16) w[i] = toupper(w[i])          # case flip
    out = out (out == "" ? "" : " ") w[i]
  }
  print out
}' "$work/ref.txt" > "$work/hyp.txt"

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
time_runs() {  # prints "wall cpu" seconds per run (cpu = user + sys)
  for ((r = 0; r < runs; r++)); do
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" > "$work/out.txt"
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$work/time.txt"
  done
}
median_of() { awk -v col="$1" '{ print $col }' "$2" | median; }

echo "lines: $(wc -l < "$work/hyp.txt") hyp, $(wc -l < "$work/ref.txt") ref; runs: $runs"
echo "load: $(uptime)"
time_runs taskset -c 0 "$heed" -q --threads 1 bleu "$work/ref.txt" -i "$work/hyp.txt" > "$work/heed_times.txt"
heed_wall=$(median_of 1 "$work/heed_times.txt")
heed_cpu=$(median_of 2 "$work/heed_times.txt")
echo "heed bleu:  median wall ${heed_wall}s, cpu ${heed_cpu}s   $(cat "$work/out.txt")"
if python3 -c 'import sacrebleu' 2>/dev/null; then
  time_runs taskset -c 0 python3 -m sacrebleu "$work/ref.txt" -i "$work/hyp.txt" -m bleu -f text > "$work/sb_times.txt"
  sb_wall=$(median_of 1 "$work/sb_times.txt")
  sb_cpu=$(median_of 2 "$work/sb_times.txt")
  echo "sacrebleu:  median wall ${sb_wall}s, cpu ${sb_cpu}s   $(cat "$work/out.txt")"
  echo "ratio sacrebleu/heed (wall medians): $(echo "$sb_wall / $heed_wall" | bc -l | cut -c1-6)"
else
  echo "sacrebleu: not installed (python3 -c 'import sacrebleu' failed); heed's time only"
fi
echo "load: $(uptime)"
