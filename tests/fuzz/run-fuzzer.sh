#!/bin/bash
# Runs a libFuzzer target for a bounded time on a copy of its committed
# corpus (libFuzzer adds what it finds to the first directory; the
# committed one stays as it is).  A crash, leak or sanitizer report fails.
#   run-fuzzer.sh FUZZER CORPUS_DIR SECONDS
set -euo pipefail
fuzzer=$(readlink -f "$1")
work=$(mktemp -d /tmp/fr-fuzz-XXXXXX)
trap 'rm -rf "$work" /dev/shm/fr-fuzz-* 2>/dev/null || true' EXIT
cp -r "$2/." "$work/"
cd "$work"
"$fuzzer" -max_total_time="$3" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>&1 |
	grep -E 'stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY|Done' || true
# libFuzzer exits non-zero on a finding; the pipeline hides it, so re-check
"$fuzzer" -runs=0 "$work" >/dev/null 2>&1
[ -z "$(ls crash-* leak-* timeout-* oom-* 2>/dev/null)" ] || { echo "findings: $(ls crash-* leak-* timeout-* oom-* 2>/dev/null)"; exit 1; }
