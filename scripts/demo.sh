#!/usr/bin/env bash
# The demo: installs the dependencies, builds heed in build/ and runs it on the data shipped in
# data/. Each step is one `run` line; results go to stdout, progress logs to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build --target heed -j"$(nproc)"

heed=build/heed
run() {
  echo "+ $*" >&2
  "$@"
}

run "$heed" --version
run "$heed" --help

# The main job on the shipped data: train the quickstart model (about 3 minutes on 2 cores),
# translate the test set, score it. A previous demo's model is replaced.
model=runs/quickstart
rm -rf "$model"
run "$heed" train -c configs/quickstart.json -m "$model"
run "$heed" translate -m "$model" -i data/test.en -o "$model/test.hyp.de"
echo "First translations (source / heed / reference):"
paste -d '\n' <(head -n 5 data/test.en) <(head -n 5 "$model/test.hyp.de") <(head -n 5 data/test.de) | sed 'n;n;G'
run "$heed" bleu data/test.de -i "$model/test.hyp.de" -m bleu chrf
