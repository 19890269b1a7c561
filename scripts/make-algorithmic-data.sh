#!/usr/bin/env bash
# Algorithmic tasks for memory-augmented models (the Neural Turing Machine paper's tasks, with
# its 8-bit vectors as tokens): token files for heed train / translate. Symbols are the words
# s0 .. s<VOCAB-1>.
#
#   scripts/make-algorithmic-data.sh TASK [options]
#
#   copy      s_1 .. s_L                      → s_1 .. s_L
#   reverse   s_1 .. s_L                      → s_L .. s_1
#   repeat    s_1 .. s_L x<k>                 → s_1 .. s_L repeated k times (k in 1 .. --repeats)
#   recall    a b c | d e f | ... ? d e f     → the item after the queried one (L items of 3
#                                               symbols, distinct; the query is never the last)
#
# L is the sequence length (recall: the number of items). Options (defaults):
#   --out DIR              data/TASK
#   --vocab N              symbols (256)
#   --min-length N         training and dev lengths (1 .. 20; recall 2 .. 6)
#   --max-length N
#   --test "A-B C ..."     test length ranges, one file pair each: test-A-B.{src,tgt}, test-C.{src,tgt}
#                          (copy/reverse/repeat "1-20 40 60", recall "6 12")
#   --repeats N            largest repeat count (repeat; 5)
#   --train N --dev N --test-count N    pairs (50000, 500, 500; recall trains on 1000000: an NTM
#                          memorised 50,000 recall episodes, train loss 0.76 against dev 1.62)
#   --seed N               (1)
#
# The same seed gives the same files with any awk: a Park-Miller generator of our own
# (x <- 16807 x mod 2^31-1, exact in awk's doubles), not awk's rand().
set -euo pipefail

task=${1:-}
case $task in
  copy | reverse | repeat | recall) shift ;;
  *) echo "usage: scripts/make-algorithmic-data.sh copy|reverse|repeat|recall [options]" >&2; exit 2 ;;
esac
out=data/$task vocab=256 repeats=5 train=50000 dev=500 test_count=500 seed=1
if [[ $task == recall ]]; then min=2 max=6 tests="6 12" train=1000000; else min=1 max=20 tests="1-20 40 60"; fi
while (($#)); do
  (($# >= 2)) || { echo "make-algorithmic-data.sh: $1 needs a value" >&2; exit 2; }
  case $1 in
    --out) out=$2 ;;
    --vocab) vocab=$2 ;;
    --min-length) min=$2 ;;
    --max-length) max=$2 ;;
    --test) tests=$2 ;;
    --repeats) repeats=$2 ;;
    --train) train=$2 ;;
    --dev) dev=$2 ;;
    --test-count) test_count=$2 ;;
    --seed) seed=$2 ;;
    *) echo "make-algorithmic-data.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
for n in "$vocab" "$min" "$max" "$repeats" "$train" "$dev" "$test_count" "$seed"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "make-algorithmic-data.sh: '$n' is not a non-negative integer" >&2; exit 2; }
done
((min >= 1 && min <= max)) || { echo "make-algorithmic-data.sh: need 1 <= min-length <= max-length" >&2; exit 2; }
((vocab >= 2 && repeats >= 1)) || { echo "make-algorithmic-data.sh: need vocab >= 2, repeats >= 1" >&2; exit 2; }
[[ $task != recall ]] || ((min >= 2)) || { echo "make-algorithmic-data.sh: recall needs at least 2 items" >&2; exit 2; }
mkdir -p "$out"

awk -v task="$task" -v out="$out" -v vocab="$vocab" -v min="$min" -v max="$max" -v tests="$tests" \
    -v repeats="$repeats" -v train="$train" -v dev="$dev" -v test_count="$test_count" -v seed="$seed" '
function next_uniform() {  # in [0, 1)
  state = (state * 16807) % 2147483647
  return (state - 1) / 2147483646
}
function draw(n) { return int(next_uniform() * n) }  # in 0 .. n-1
function symbol() { return "s" draw(vocab) }
function join(a, from, to,    s, i) { s = ""; for (i = from; i <= to; i++) s = s (i > from ? " " : "") a[i]; return s }
# One pair of length len into src / tgt (globals).
function make_pair(len,    seq, i, k, n, item, used, q) {
  if (task == "recall") {
    split("", used)
    for (i = 1; i <= len; i++) {
      do { item[i] = symbol() " " symbol() " " symbol() } while (item[i] in used)
      used[item[i]] = 1
    }
    q = 1 + draw(len - 1)
    src = item[1]
    for (i = 2; i <= len; i++) src = src " | " item[i]
    src = src " ? " item[q]
    tgt = item[q + 1]
    return
  }
  for (i = 1; i <= len; i++) seq[i] = symbol()
  src = join(seq, 1, len)
  if (task == "copy") tgt = src
  else if (task == "reverse") { tgt = ""; for (i = len; i >= 1; i--) tgt = tgt (i < len ? " " : "") seq[i] }
  else {
    k = 1 + draw(repeats)
    tgt = src
    for (n = 2; n <= k; n++) tgt = tgt " " src
    src = src " x" k
  }
}
function write_split(name, pairs, lo, hi,    i) {
  for (i = 0; i < pairs; i++) {
    make_pair(lo + draw(hi - lo + 1))
    print src > (out "/" name ".src")
    print tgt > (out "/" name ".tgt")
  }
  close(out "/" name ".src"); close(out "/" name ".tgt")
}
function fail(message) { print "make-algorithmic-data.sh: " message > "/dev/stderr"; exit 2 }
BEGIN {
  # Every range is checked before a file is written.
  longest = max
  n = split(tests, range, " ")
  for (r = 1; r <= n; r++) {
    if (split(range[r], ends, "-") == 1) ends[2] = ends[1]
    if (ends[1] !~ /^[0-9]+$/ || ends[2] !~ /^[0-9]+$/ || ends[1] + 0 < 1 || ends[1] + 0 > ends[2] + 0 ||
        (task == "recall" && ends[1] + 0 < 2))
      fail("bad test range " range[r])
    low[r] = ends[1] + 0; high[r] = ends[2] + 0
    if (high[r] > longest) longest = high[r]
  }
  # Recall draws distinct items of 3 symbols: with too few of them the draw would never end.
  if (task == "recall" && longest > vocab * vocab * vocab)
    fail("recall of " longest " distinct items needs --vocab of at least " int(longest ^ (1 / 3) + 0.999999) \
         " (" vocab "^3 = " vocab * vocab * vocab " items)")
  state = (seed % 2147483646) + 1
  for (i = 0; i < 10; i++) next_uniform()
  write_split("train", train, min, max)
  write_split("dev", dev, min, max)
  for (r = 1; r <= n; r++) write_split("test-" range[r], test_count, low[r], high[r])
}'

# generated data: keep it out of git
printf '# generated by scripts/make-algorithmic-data.sh\n*\n' > "$out/.gitignore"
echo "make-algorithmic-data.sh: wrote $task data to $out (train $train, dev $dev, tests: $tests; seed $seed)" >&2
