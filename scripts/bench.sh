#!/usr/bin/env bash
# Side-by-side benchmark of heed against the PyTorch reference implementation (torch_nmt.py, kept
# outside this repository): training throughput and peak memory, translation speed (greedy and
# beam 5), the training step's GFLOP/s against the bare oneDNN matmul rate, and dev BLEU after
# equal training time, for the GRU–Bahdanau and the Transformer models at their default sizes.
# Translation speed is measured twice: each system with its own model, and both with heed's
# model converted into a reference checkpoint (identical search, so the ratio is speed alone).
# scripts/bench-driver.py does the measuring and documents exactly what is compared and how.
#
# Usage: scripts/bench.sh [CORPUS_DIR] [driver options]
#   CORPUS_DIR      train.{en,de} and dev.{en,de} (default: the repository's data/; the en-de
#                   corpus of the shared corpora folder is the one to report)
#   --peer PATH     the reference torch_nmt.py (default: ../shared/bench/peer/torch_nmt.py,
#                   relative to the repository)
#   --work DIR      data, models and logs (default: a new temporary folder)
#   --json FILE     results as JSON (default: WORK/bench.json)
#   --threads N --pairs N --train-lines N --steps N --quality-minutes M --archs gru,transformer ...
#   --phases speed,quality,int8   the training-speed phase, the equal-time quality phase (which
#                   ends with int8 rows), and int8 alone for trained models given with
#                   --int8-models gru=DIR,transformer=DIR
#   --quality-side-by-side   train heed and the reference for the quality phase at the same time,
#                   one thread each (half the wall time)
#   --reuse-models  quality phase with the models and data of an earlier run in --work: only
#                   translation speed and BLEU are measured again (after a change to decoding)
#                   see `scripts/bench-driver.py --help`
#
# On a fresh Debian 12 machine it installs python3-torch, sentencepiece and libopenblas0-openmp
# (libopenblas0-openmp makes torch use OpenBLAS instead of the ~50x slower reference BLAS), plus
# heed's build dependencies, and builds heed in Release in build-release/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=$root/data
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then corpus=$1; shift; fi
peer=$root/../shared/bench/peer/torch_nmt.py
work=
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --peer) peer=${2:?--peer needs a path}; shift 2 ;;
    --peer=*) peer=${1#--peer=}; shift ;;
    --work) work=${2:?--work needs a folder}; shift 2 ;;
    --work=*) work=${1#--work=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ! -f "$peer" ]; then
  echo "bench: error: the PyTorch reference $peer is missing; give its path with --peer PATH" >&2
  exit 1
fi
[ -d "$corpus" ] || { echo "bench: error: no corpus folder $corpus" >&2; exit 1; }

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
missing=()
for p in python3-torch sentencepiece libopenblas0-openmp; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update
  "${as_root[@]}" apt-get install -y "${missing[@]}"
fi
command -v cmake >/dev/null && command -v g++ >/dev/null || "$root/scripts/install-deps.sh"

build=$root/build-release
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target heed -j "$(nproc)"

if [ -z "$work" ]; then work=$(mktemp -d -t heed-bench.XXXXXX); fi
echo "bench: work folder $work"
exec /usr/bin/python3 "$root/scripts/bench-driver.py" --corpus "$corpus" --peer "$peer" \
  --heed "$build/heed" --work "$work" "${args[@]}"
