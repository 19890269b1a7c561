#!/usr/bin/env bash
# Fuzzes heed's readers of untrusted input with libFuzzer (clang 14, AddressSanitizer and
# UndefinedBehaviorSanitizer): builds tests/fuzz/ in build-fuzz/ (HEED_FUZZ=ON), seeds each target
# from the test data and runs the targets one after another, one process each, for SECONDS each.
#
#   scripts/fuzz.sh [--seconds N] [TARGET ...]      (default 600 s, every target)
#
# Targets: fuzz_config, fuzz_tokenizer_json, fuzz_tokenizer_roundtrip, fuzz_safetensors,
# fuzz_metrics, fuzz_corpus, fuzz_corpus_cache, fuzz_graph, fuzz_serve_request. The corpus each grows is kept in
# build-fuzz/corpus/TARGET (a later run starts from it); a finding (crash-*, leak-*, timeout-*,
# oom-*) is written to build-fuzz/findings/TARGET/ and ends that target's run: reproduce it with
# `build-fuzz/fuzz/TARGET FILE`. Prints per target: seconds, executions, coverage (libFuzzer's
# cov: edges), corpus size and findings; exits 1 when any target found something.
# Installs clang-14, libclang-rt-14-dev and libomp-14-dev when clang++-14 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    -*) echo "usage: scripts/fuzz.sh [--seconds N] [TARGET ...]" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds takes a number, got '$seconds'" >&2; exit 2; }
all=(fuzz_config fuzz_tokenizer_json fuzz_tokenizer_roundtrip fuzz_safetensors fuzz_metrics fuzz_corpus
     fuzz_corpus_cache fuzz_graph fuzz_serve_request)
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

if ! command -v clang++-14 > /dev/null || [[ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ]]; then
  as_root=()
  if [[ $(id -u) -ne 0 ]]; then as_root=(sudo env DEBIAN_FRONTEND=noninteractive); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update
  "${as_root[@]}" apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev libomp-14-dev
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DHEED_FUZZ=ON \
  -DHEED_BUILD_TESTS=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"

# Seeds from the test data and the example configs.
seeds=build-fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{fuzz_config,fuzz_tokenizer_json,fuzz_tokenizer_roundtrip,fuzz_safetensors,fuzz_metrics,fuzz_corpus,fuzz_corpus_cache,fuzz_graph,fuzz_serve_request}
cp configs/*.json "$seeds/fuzz_config/"
cp tests/fixtures/serve/*.json "$seeds/fuzz_serve_request/"
cp tests/fixtures/golden/*.safetensors "$seeds/fuzz_safetensors/"
n=0
for case_dir in tests/fixtures/bleu_cases/*/; do
  [[ -f $case_dir/hyp.txt && -f $case_dir/ref.txt ]] || continue
  n=$((n + 1))
  head -n 3 "$case_dir/hyp.txt" > "$seeds/fuzz_tokenizer_roundtrip/$n"
  { printf "\\x$(printf %02x $((n * 37 % 256)))"; head -n 1 "$case_dir/hyp.txt"; head -n 1 "$case_dir/ref.txt"; } \
    > "$seeds/fuzz_metrics/$n"
  { printf "\\x$(printf %02x $((n * 11 % 256)))"; head -n 4 "$case_dir/hyp.txt"; printf '\0'; head -n 4 "$case_dir/ref.txt"; } \
    > "$seeds/fuzz_corpus/$n"
done
{ printf '\x07'; head -n 20 tests/fixtures/text/sample.en; printf '\0'; head -n 20 tests/fixtures/text/sample.de; } \
  > "$seeds/fuzz_corpus/sample"
heed=${HEED:-build/heed}
if [[ -x $heed ]]; then
  "$heed" -q tokenizer train --vocab-size 300 -o "$seeds/fuzz_tokenizer_json/joint.json" tests/fixtures/text/sample.en
  "$heed" -q tokenizer train --vocab-size 280 -o "$seeds/fuzz_tokenizer_json/separate.json" \
    --source-files tests/fixtures/text/sample.en --target-files tests/fixtures/text/sample.de
fi
# A corpus cache of two pairs (format in src/data/corpus_cache.hpp), u16 ids, with its checksum.
python3 - "$seeds/fuzz_corpus_cache/two-pairs" <<'PY'
import struct, sys
lengths = struct.pack("<4I", 2, 1, 1, 1)
ids = struct.pack("<5H", 300, 301, 302, 303, 304)
h = 0xcbf29ce484222325
for b in lengths + ids:
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
header = b"HEEDCRP2" + struct.pack("<3Q2I6Q", 12345, 2, 5, 2, 0, 3, 2, 1, 0, 0, h)
open(sys.argv[1], "wb").write(header + lengths + ids)
PY
# Graph directories (format in src/graph/graph_data.hpp): the option byte, then features, labels,
# edges, train, val, test and meta.json, NUL-separated.
{ printf '\x03'; printf '0 2 | 1 1\n1 | 2\n\n0 | 0.5\n'; printf '\0'; printf '0\n1\n1\n0\n'; printf '\0'
  printf '0 1\n2 1\n3 0\n0 1\n'; printf '\0'; printf '0\n1\n'; printf '\0'; printf '2\n'; printf '\0'; printf '3\n'
  printf '\0'; printf '{"nodes": 4, "classes": 2}'; } > "$seeds/fuzz_graph/four-nodes"
{ printf '\x00'; head -n 40 data/cora/features.txt; printf '\0\0'; awk '$1 < 40 && $2 < 40' data/cora/edges.txt; } \
  > "$seeds/fuzz_graph/cora-40"

status=0
summary=()
for target in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$target findings=build-fuzz/findings/$target
  # An earlier run's findings are kept aside (findings/TARGET.TIME), not counted again: this run
  # reports what it finds itself.
  if [[ -d $findings && -n $(ls -A "$findings") ]]; then mv "$findings" "$findings.$(date +%Y%m%d-%H%M%S)"; fi
  mkdir -p "$corpus" "$findings"
  log=build-fuzz/$target.log
  echo "fuzz.sh: $target for ${seconds}s" >&2
  set +e
  "build-fuzz/fuzz/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "$seeds/$target" > "$log" 2>&1
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  found=$(find "$findings" -type f | wc -l)
  [[ $found -eq 0 ]] || status=1
  summary+=("$(printf '%-26s %6ss %12s execs  cov %6s  corpus %6s  findings %s' "$target" "${time:-?}" \
    "${runs:-?}" "${cov:-?}" "$(find "$corpus" -type f | wc -l)" "$found")")
done
printf '%s\n' "${summary[@]}"
exit $status
