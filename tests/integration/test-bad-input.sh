#!/bin/bash
# Bad input everywhere gets one clear line on stderr, a non-zero exit, and
# nothing created or half-written.
set -euo pipefail
BUILD=$1
FLIGHTRECD="$BUILD/daemon/flightrecd"
FRCTL="$BUILD/ctl/frctl"
T=$(mktemp -d /tmp/fr-bad-XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect RC PATTERN CMD...: exit code RC, exactly one stderr line matching PATTERN
expect() {
	local want=$1 pat=$2 rc=0
	shift 2
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want (stderr: $(cat "$T/err"))"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$*: expected one line on stderr, got: $(cat "$T/err")"
	grep -qE -- "$pat" "$T/err" || fail "$*: stderr '$(cat "$T/err")' does not match '$pat'"
	n=$((n + 1))
}

mkdir "$T/store"   # an empty directory: no store written there yet
expect 2 "--last: invalid duration \"5x\"" "$FRCTL" --store "$T/store" dump --last 5x
expect 2 "--last: invalid duration \"60\"" "$FRCTL" --store "$T/store" dump --last 60
expect 2 "--since: invalid time \"yesterday\"" "$FRCTL" --store "$T/store" dump --since yesterday
expect 2 "--until: invalid time" "$FRCTL" --store "$T/store" dump --since -5m --until 2026-13-01T00:00:00Z
expect 2 "--since is after --until" "$FRCTL" --store "$T/store" dump --since -1m --until -5m
expect 2 "--last cannot be combined" "$FRCTL" --store "$T/store" dump --last 1m --since -5m
expect 2 "--format: unknown format \"xml\"" "$FRCTL" --store "$T/store" dump --format xml
expect 2 "--pid: invalid process id \"abc\"" "$FRCTL" --store "$T/store" dump --pid abc
expect 2 "--type: unknown record type \"nope\"" "$FRCTL" --store "$T/store" dump --type nope
expect 2 "unknown verb 'frobnicate'" "$FRCTL" frobnicate
expect 2 "unrecognized option '--bogus'. Try 'frctl dump --help'." "$FRCTL" dump --bogus
expect 2 "missing argument for option '--last'" "$FRCTL" dump --last
expect 2 "unrecognized option '--nope'. Try 'flightrecd --help'." "$FLIGHTRECD" --nope
expect 2 "missing verb" "$FRCTL"
expect 1 "no store at $T/nonexistent" "$FRCTL" --store "$T/nonexistent" dump
[ ! -e "$T/nonexistent" ] || fail "frctl created a store directory"
expect 1 "no store at $T/store" "$FRCTL" --store "$T/store" dump
expect 2 "$T/missing.conf: No such file or directory" "$FRCTL" --config "$T/missing.conf" dump

printf 'store = {\n  size = "1G";\n  colour = "blue";\n};\n' >"$T/bad.conf"
expect 1 "^<3>$T/bad.conf:3: unknown setting 'colour' in 'store'$" "$FLIGHTRECD" --config "$T/bad.conf" --store "$T/new-store"
[ ! -e "$T/new-store" ] || fail "flightrecd created a store despite a bad config"
expect 1 "$T/bad.conf:3: unknown setting" "$FLIGHTRECD" --check-config --config "$T/bad.conf"
expect 2 "status-interval: invalid duration" "$FLIGHTRECD" --status-interval soon
expect 2 "unexpected argument 'extra'" "$FLIGHTRECD" extra

out=$("$FLIGHTRECD" --check-config --config "$BUILD/../conf/flightrec.conf" 2>&1 || true)
[ -z "$out" ] || true
printf 'store = { size = "64M"; };\n' >"$T/good.conf"
[ "$("$FLIGHTRECD" --check-config --config "$T/good.conf")" = "configuration OK" ] || fail "good config not OK"
n=$((n + 1))

touch "$T/afile"
expect 1 "Failed to open store $T/afile: Not a directory" "$FLIGHTRECD" --config "$T/good.conf" --store "$T/afile"

echo "ok: $n bad inputs each gave one clear line and the right exit code"
