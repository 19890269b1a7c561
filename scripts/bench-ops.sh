#!/bin/sh
# Matmul wrapper overhead: `heed bench ops` with 1 and 2 threads, the load average printed
# before each run (a busy machine lowers both columns alike; read the ratio column).
# Usage: scripts/bench-ops.sh [path/to/heed] [extra bench options...]
set -eu
heed=${1:-build/heed}
[ $# -gt 0 ] && shift
for threads in 1 2; do
  uptime
  "$heed" --threads "$threads" bench ops "$@"
done
