#!/usr/bin/env bash
# Installs the dependencies, builds heed and its tests in build/ and runs every test
# (two at a time, one thread each). Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j2
