#!/usr/bin/env bash
# Side-by-side benchmark of heed's BPE tokenizer against SentencePiece (spm_train/spm_encode),
# on the same training text at the same vocabulary size and thread count.
#
# Usage: scripts/bench-tokenizer.sh CORPUS_DIR
#   CORPUS_DIR holds train.<lang> files; their concatenation is one corpus, and a second corpus
#   of 1,000,000 lines repeats it. For each: training seconds, encoding lines/s (encoding the
#   training text with the model just learned) and pieces per sentence, with ratios heed/spm of
#   the medians over the repeats.
# Environment: HEED (binary, default build/heed), VOCAB (8000), THREADS (1: spm_encode has
#   one thread), TRAIN_REPEATS (3), ENCODE_REPEATS (3), KEEP=1 keeps the work directory.
# Fairness: SentencePiece runs BPE with --normalization_rule_name=identity and
#   --remove_extra_whitespaces=false (heed does not normalise), --byte_fallback=true (heed
#   always has the 256 byte tokens), the same --character_coverage (0.9995) and all input
#   sentences (--input_sentence_size=0). Its other defaults stay (split_by_unicode_script,
#   split_by_number, max_sentencepiece_length 16), which heed's defaults match.
set -euo pipefail
shopt -s inherit_errexit  # a command failing inside $(...) stops the script: no figure from a failed run

corpus_dir=${1:?usage: $0 CORPUS_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
heed=${HEED:-$root/build/heed}
vocab=${VOCAB:-8000}
threads=${THREADS:-1}
train_repeats=${TRAIN_REPEATS:-3}
encode_repeats=${ENCODE_REPEATS:-3}
for tool in "$heed" spm_train spm_encode; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
shopt -s nullglob
train_files=("$corpus_dir"/train.*)
[ ${#train_files[@]} -gt 0 ] || { echo "no train.* files in $corpus_dir" >&2; exit 1; }

work=$(mktemp -d)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
cat "${train_files[@]}" > "$work/base.txt"
base_lines=$(wc -l < "$work/base.txt")
copies=$(( (1000000 + base_lines - 1) / base_lines ))
for ((i = 0; i < copies; ++i)); do cat "$work/base.txt"; done | head -n 1000000 > "$work/1m.txt" || true

seconds() {  # seconds a command takes (its output discarded)
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pieces_per_line() { awk '{ n += NF } END { printf "%.4f", n / NR }' "$1"; }
ratio() { echo "scale=3; $1 / $2" | bc -l; }

echo "heed vs SentencePiece $(spm_train --version 2>&1 | head -1), BPE, vocabulary $vocab, $threads thread(s)"
echo "load average before: $(uptime)"
printf '%-10s %-22s %12s %12s %9s\n' corpus measure heed spm heed/spm
for corpus in base 1m; do
  text=$work/$corpus.txt
  lines=$(wc -l < "$text")
  ht=(); st=(); he=(); se=()
  for ((r = 0; r < train_repeats; ++r)); do
    ht+=("$(seconds "$heed" --threads "$threads" tokenizer train --vocab-size "$vocab" -o "$work/heed.json" "$text")")
    st+=("$(seconds spm_train --input="$text" --model_prefix="$work/spm" --vocab_size="$vocab" --model_type=bpe \
      --normalization_rule_name=identity --remove_extra_whitespaces=false --byte_fallback=true \
      --character_coverage=0.9995 --input_sentence_size=0 --num_threads="$threads")")
  done
  for ((r = 0; r < encode_repeats; ++r)); do
    he+=("$(seconds "$heed" --threads "$threads" tokenizer encode -m "$work/heed.json" -i "$text" -o "$work/heed.pieces")")
    se+=("$(seconds sh -c "spm_encode --model='$work/spm.model' --output_format=piece < '$text' > '$work/spm.pieces'")")
  done
  h_train=$(printf '%s\n' "${ht[@]}" | median); s_train=$(printf '%s\n' "${st[@]}" | median)
  h_enc=$(printf '%s\n' "${he[@]}" | median); s_enc=$(printf '%s\n' "${se[@]}" | median)
  h_lps=$(echo "$lines / $h_enc" | bc -l); s_lps=$(echo "$lines / $s_enc" | bc -l)
  h_pps=$(pieces_per_line "$work/heed.pieces"); s_pps=$(pieces_per_line "$work/spm.pieces")
  name="${corpus/base/$base_lines}"; name="${name/1m/1000000}"
  printf '%-10s %-22s %12.2f %12.2f %9s\n' "$name" "training seconds" "$h_train" "$s_train" "$(ratio "$h_train" "$s_train")"
  printf '%-10s %-22s %12.0f %12.0f %9s\n' "$name" "encoding lines/s" "$h_lps" "$s_lps" "$(ratio "$h_lps" "$s_lps")"
  printf '%-10s %-22s %12s %12s %9s\n' "$name" "pieces per sentence" "$h_pps" "$s_pps" "$(ratio "$h_pps" "$s_pps")"
done
echo "load average after: $(uptime)"
echo "(medians of $train_repeats training and $encode_repeats encoding runs; lines/s: higher is faster)"
