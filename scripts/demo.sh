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
