#!/usr/bin/env bash
# Builds heed with AddressSanitizer and UndefinedBehaviorSanitizer, and its tests' own code with
# AddressSanitizer (HEED_SANITIZE; -O1 as the sanitizers advise, -g1: line tables for the
# reports) in build-asan/, and runs every test there: the CLI tests then run the sanitized heed
# too. A sanitizer report fails its test (UBSan does not recover; LeakSanitizer is on). Exits
# non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DHEED_SANITIZE=ON
cmake --build build-asan -j"$(nproc)"
cd build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j2
