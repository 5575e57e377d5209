#!/bin/bash
# frctl reading a large store is valgrind-clean: dump of the whole store
# (text), of its last minute in JSON and Perfetto, report of the whole
# store, and a bundle written and read back, under memcheck with
# full leak checking; any error or definite/indirect/possible leak fails.
# The store (fr-store-fill, through the real writer) is sized so that the
# whole test stays well under 2 minutes under valgrind's ~30x slowdown.
#   test-valgrind.sh BUILD_DIR
set -euo pipefail
BUILD=$1
FRCTL=$BUILD/ctl/frctl
FILL=$BUILD/tests/helpers/fr-store-fill
T=$(mktemp -d /tmp/fr-valgrind-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 3 MiB of chunks over 15 minutes in a 64 MiB store of 8 segments: ~600 000
# records, of which the window (the last 60 s) holds ~40 000
now=$(date +%s)
"$FILL" "$T/store" $((64 << 20)) 8 $((3 << 20)) 900 0 eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee text >/dev/null
records=$("$FRCTL" --store "$T/store" status --json 2>/dev/null | jq .store.records || true)
[ "${records:-0}" -gt 250000 ] || fail "the filled store holds ${records:-no} records"

# the windows in absolute times: the records end where the fill ran
at() { date -u -d "@$((now - $1))" +%Y-%m-%dT%H:%M:%SZ; }
MIN=(--since "$(at 60)" --until "$(at -1)")
SEC20=(--since "$(at 20)" --until "$(at -1)")

# vg NAME FRCTL_ARGS...: frctl under memcheck; its output in $T/NAME.out
vg() {
	local name=$1 rc=0 t0
	shift
	t0=$(date +%s%N)
	valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible --track-fds=no --log-file="$T/$name.vg" \
		"$FRCTL" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	[ "$rc" -ne 99 ] || fail "frctl $* under valgrind: $(head -40 "$T/$name.vg")"
	[ "$rc" -eq 0 ] || fail "frctl $* exited $rc: $(head -5 "$T/$name.err")"
	[ ! -s "$T/$name.vg" ] || fail "frctl $*: valgrind said: $(head -40 "$T/$name.vg")"
	echo "ok: valgrind-clean: frctl $* ($(wc -l <"$T/$name.out") lines, $((($(date +%s%N) - t0) / 1000000)) ms)"
}

vg text --store "$T/store" dump
vg json --store "$T/store" dump "${MIN[@]}" --format json
vg perfetto --store "$T/store" dump "${MIN[@]}" --format perfetto
vg report --store "$T/store" report
vg bundle --store "$T/store" dump "${SEC20[@]}" -o "$T/window.frb"
vg bundle-report report --input "$T/window.frb"
vg bundle-json dump --input "$T/window.frb" --format json

# each ran on the window it was given: real output, not an early exit
n=$(wc -l <"$T/json.out")
[ "$n" -gt 20000 ] || fail "the JSON dump of the last minute has $n records"
[ "$(wc -l <"$T/text.out")" -ge "$records" ] || fail "the text dump of the whole store has $(wc -l <"$T/text.out") lines for $records records"
jq -e -s 'all(.[]; .type == "exec" or .type == "syscall")' "$T/json.out" >/dev/null || fail "the JSON dump is not JSON Lines of the filled records"
jq -e '.traceEvents | length > 0' "$T/perfetto.out" >/dev/null || fail "the Perfetto trace has no events"
[ -s "$T/report.out" ] && [ -s "$T/bundle-report.out" ] || fail "empty report"
m=$(wc -l <"$T/bundle-json.out")
[ "$m" -gt 0 ] && [ "$m" -lt "$n" ] || fail "the 20 s bundle has $m records (the 60 s window: $n)"
echo "ok: $records records in the store, $n in the window, every reader valgrind-clean"
