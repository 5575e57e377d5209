#!/bin/bash
# Stores and incidents of the chunk format before records said their
# length (FR_CHUNK_INCOMPAT_RECORD_EXT, issue 44) keep reading: an
# incident file flightrecd wrote then (tests/fixtures/incident-format-1.fri:
# a SIGSEGV with its stack, samples, off-CPU waits, processes, marks,
# metrics, a trigger) dumps as it did then, record for record
# (incident-format-1.json, what frctl made of it at that commit), with
# no warning; the report reads it too.
set -euo pipefail
SRC=$1
FRCTL=$2/ctl/frctl
FX=$SRC/tests/fixtures/incident-format-1
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d /tmp/fr-old-format-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$FRCTL" dump --input "$FX.fri" --format json >"$T/now.json" 2>"$T/err" || fail "dump failed: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "dump warned: $(cat "$T/err")"
diff -q "$FX.json" "$T/now.json" >/dev/null ||
	fail "the old incident dumps otherwise now: $(diff "$FX.json" "$T/now.json" | head -c 1500)"
n=$(wc -l <"$T/now.json")
[ "$n" -ge 150 ] || fail "only $n records"
jq -e -s 'any(.[]; .type == "signal" and .signal == "SIGSEGV" and (.stack | length) > 3)' "$T/now.json" >/dev/null ||
	fail "no SIGSEGV with its stack"
"$FRCTL" report --input "$FX.fri" >"$T/report" 2>"$T/err" || fail "report failed: $(cat "$T/err")"
grep -q "SIGSEGV" "$T/report" || fail "the report does not show the SIGSEGV"
echo "ok: $n records of the old format read as before, and reported"
