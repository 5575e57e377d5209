#!/bin/bash
# The full soak: tests/kernel/test-soak.sh (mixed load on the shipped
# default configuration) for SOAK_S seconds, 600 by default, printing the
# RSS / fd curve every 2 s and the verdicts (RSS within 5 % after a
# warm-up of a third of the run, no fd growth, store within its bound, no
# error line in the log).  Run by hand, as root:
#   tests/bench/soak.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(readlink -f "${1:-build}")
export SOAK_S=${SOAK_S:-600}
echo "soak: ${SOAK_S}s; kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)"
exec tests/kernel/test-soak.sh "$BUILD" "$BUILD/tests/helpers"
