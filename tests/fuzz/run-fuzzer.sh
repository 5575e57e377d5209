#!/bin/bash
# Runs a libFuzzer target for a bounded time on a copy of its committed
# corpus (libFuzzer adds what it finds to the first directory; the
# committed one stays as it is).  A crash, leak or sanitizer report fails.
#   run-fuzzer.sh FUZZER CORPUS_DIR SECONDS [LIBFUZZER FLAGS...]
# (-close_fd_mask=3 for a target that prints a line per input: libFuzzer
# still writes its own report and a sanitizer's to the real stderr)
set -euo pipefail
fuzzer=$(readlink -f "$1")
work=$(mktemp -d /tmp/fr-fuzz-XXXXXX)
# The target's scratch store: this run's own, so that two fuzzers run in
# parallel by meson never remove each other's files
FR_FUZZ_SCRATCH=$(mktemp -d /dev/shm/fr-fuzz-run-XXXXXX)
export FR_FUZZ_SCRATCH
# frctl names frames by build id from debug files, and from debuginfod
# servers: a fuzzed build id must not go out on the network
unset DEBUGINFOD_URLS
# leaks inside libconfig's own parser, not ours (the file says which)
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")/../sanitizers" && pwd)/lsan-libconfig.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
trap 'rm -rf "$work" "$work.log" "$FR_FUZZ_SCRATCH"' EXIT
cp -r "$2/." "$work/"
cd "$work"
rc=0
"$fuzzer" -max_total_time="$3" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${@:4}" "$work" >"$work.log" 2>&1 || rc=$?
grep -E 'stat::number_of_executed_units|stat::new_units_added|Done' "$work.log" || true
findings=$(ls crash-* leak-* timeout-* oom-* 2>/dev/null || true)
[ "$rc" -ne 0 ] || [ -n "$findings" ] || exit 0
# The work directory goes with the trap: print the report and each input
# (base64), so that a CI log is enough to reproduce it with "FUZZER FILE"
echo "fuzzer exit status $rc; its report:"
sed -n '/ERROR\|WARNING\|runtime error\|==[0-9]*==/,$p' "$work.log" | head -60
for f in $findings; do
	echo "finding $f ($(stat -c %s "$f") bytes), base64:"
	base64 -w 76 "$f"
done
exit 1
