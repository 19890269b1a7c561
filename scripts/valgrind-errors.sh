#!/usr/bin/env bash
# heed's error paths under valgrind (memcheck): each command must end with its documented exit
# status and one error line, and valgrind must report nothing (invalid reads or writes,
# uninitialised values, bad frees). Uses a portable heed (HEED_NATIVE=OFF), built in
# build-portable/ when HEED is not given: valgrind cannot run AVX-512 instructions, which a
# -march=native build contains on an AVX-512 machine. oneDNN chooses its kernels at run time
# from what the CPU reports, and under valgrind that is at most AVX2.
#
#   scripts/valgrind-errors.sh            Environment: HEED (default build-portable/heed)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind > /dev/null || { echo "valgrind-errors.sh: valgrind not found (Debian package valgrind)" >&2; exit 2; }
heed=${HEED:-}
if [[ -z $heed ]]; then
  cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DHEED_NATIVE=OFF -DHEED_BUILD_TESTS=OFF > /dev/null
  cmake --build build-portable -j"$(nproc)" --target heed
  heed=build-portable/heed
fi
heed=$(realpath "$heed")
work=$(mktemp -d -t heed-valgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Set, so that heed does not execute itself again (to set it) outside valgrind.
export GOMP_SPINCOUNT=10000

# A small trained model (outside valgrind: training there would take long).
bash scripts/make-reverse-data.sh "$work/data" 3 > /dev/null
cat > "$work/config.json" <<EOF
{"model": {"gru": {"emb_dim": 8, "enc_hidden": 8, "dec_hidden": 8, "attn_dim": 8, "readout_dim": 8}},
 "data": {"train": {"src": "$work/data/dev.src", "tgt": "$work/data/dev.tgt"}, "max_length": 40},
 "tokenizer": {"vocab_size": 300}, "training": {"max_steps": 2, "batch_tokens": 200}}
EOF
"$heed" -q --threads 1 train -c "$work/config.json" -m "$work/model"
head -c 1000 "$work/model/model.safetensors" > "$work/cut.safetensors"
printf '{"format": "heed-bpe", "version": 1, "vocab": ["\xC3\x28"]}' > "$work/bad-tokenizer.json"
printf 'a b c\n' > "$work/one.txt"
printf 'a b c\nd e f\n' > "$work/two.txt"

failures=0
# expect STATUS ARGS...: heed ARGS under valgrind exits STATUS with one "heed: error:" line.
# Results go to $stdout (default: a file).
stdout=""
expect() {
  local want=$1 status=0
  shift
  valgrind -q --error-exitcode=99 --log-file="$work/valgrind.log" "$heed" --threads 1 "$@" \
    > "${stdout:-$work/out}" 2> "$work/err" < /dev/null || status=$?
  if [[ $status -ne $want || $(grep -c '^heed: error:' "$work/err") -ne 1 || -s $work/valgrind.log ]]; then
    echo "valgrind-errors: FAILED: heed $* (exit $status, expected $want)" >&2
    cat "$work/err" "$work/valgrind.log" >&2
    failures=$((failures + 1))
  else
    echo "valgrind-errors: ok: heed $* -> $want: $(cat "$work/err")"
  fi
}

expect 2 config show --set decoding.beam=0
expect 2 config show -c "$work/missing.json"
expect 2 translate -m "$work/model" --beam 0
expect 1 translate -m "$work/model/config.json" -i "$work/one.txt"
expect 1 translate -m "$work/model" -i "$work/missing.txt"
expect 1 average -o "$work/avg.safetensors" "$work/cut.safetensors"
expect 1 tokenizer encode -m "$work/bad-tokenizer.json" -i "$work/one.txt"
expect 1 bleu "$work/two.txt" -i "$work/one.txt"
expect 2 train -m "$work/model" --resume --set model.gru.emb_dim=16
expect 1 train -m "$work/model" --resume --set data.train.src="$work/missing.src" --set data.train.tgt="$work/missing.tgt"
cp "$work/cut.safetensors" "$work/model/model.safetensors"
expect 1 translate -m "$work/model" -i "$work/one.txt"
stdout=/dev/full expect 1 bleu "$work/one.txt" -i "$work/one.txt" -m bleu chrf ter
[[ $failures -eq 0 ]] || { echo "valgrind-errors: $failures failure(s)" >&2; exit 1; }
echo "valgrind-errors: every error path clean under valgrind"
