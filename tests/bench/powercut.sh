#!/bin/bash
# The long power-cut run (issue 49): tests/kernel/test-powercut.sh with
# FR_POWERCUTS cuts, 100 by default (CI runs 8), printing one line a cut
# (mode, where it was cut, records written but not synced and lost,
# markers lost and how old the oldest was) and the distribution at the
# end, the one in RELIABILITY.md.  About 8 s a cut.  Run by hand, as root:
#   tests/bench/powercut.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(readlink -f "${1:-build}")
export FR_POWERCUTS=${FR_POWERCUTS:-100}
echo "powercut: $FR_POWERCUTS cuts; kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)"
exec tests/kernel/test-powercut.sh "$BUILD" "$BUILD/tests/helpers"
