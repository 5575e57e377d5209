#!/bin/bash
# The README's picture of the HTML report: a real crash incident's page,
# as tests/kernel/test-report-html.sh makes, opens and photographs it in
# headless Chromium, copied to docs/report-html.png.  Root, a build dir.
#   tests/tools/report-screenshot.sh [BUILD_DIR]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$HERE/../../build}" && pwd)
mkdir -p "$HERE/../../docs"
FR_REPORT_SCREENSHOT="$HERE/../../docs/report-html.png" "$HERE/../kernel/test-report-html.sh" "$BUILD"
echo "wrote docs/report-html.png"
