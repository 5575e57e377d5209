#!/bin/bash
# Boots: a store holding two boots (written with two boot ids an hour
# apart) lists both in `frctl boots`, and `dump --boot -1`, `--boot 0` and
# `--boot ID` show exactly that boot's records, as journalctl -b does.
set -euo pipefail
BUILD=$1
FILL=$2
FRCTL="$BUILD/ctl/frctl"
T=$(mktemp -d /tmp/fr-boots-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
M=$((1024 * 1024))
"$FILL" "$T/store" $((32 * M)) 8 $((2 * M)) 3000 4000 $A >/dev/null   # 2h6m..1h6m ago
"$FILL" "$T/store" $((32 * M)) 8 $((2 * M)) 3000 60 $B >/dev/null     # 51m..1m ago

"$FRCTL" --store "$T/store" boots --json >"$T/boots.json"
jq -e --arg a $A --arg b $B 'length == 2 and .[0].boot_id == $a and .[0].index == -1 and
	.[1].boot_id == $b and .[1].index == 0' "$T/boots.json" >/dev/null ||
	fail "boots: $(cat "$T/boots.json")"
echo "ok: frctl boots lists both boots, oldest first"

"$FRCTL" --store "$T/store" dump --last 3h --format bundle -o "$T/both.fri"
"$FRCTL" --store "$T/store" dump --boot -1 --format bundle -o "$T/prev.fri"
"$FRCTL" boots --input "$T/both.fri" --json | cmp -s - "$T/boots.json" || fail "boots --input of a bundle of both differs"
"$FRCTL" boots --input "$T/prev.fri" --json >"$T/prev-boots.json"
jq -e --arg a $A 'length == 1 and .[0].boot_id == $a and .[0].index == 0' "$T/prev-boots.json" >/dev/null ||
	fail "boots --input of the earlier boot's bundle: $(cat "$T/prev-boots.json")"
rc=0
"$FRCTL" boots --input "$T/boots.json" 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'is not an incident or bundle file' "$T/err" ||
	fail "boots --input of a JSON file: rc $rc, $(cat "$T/err")"
echo "ok: frctl boots --input lists the boots of a bundle, and refuses what is not one"

"$FRCTL" --store "$T/store" dump --boot -1 --format json >"$T/prev.json"
[ -s "$T/prev.json" ] || fail "dump --boot -1 is empty"
jq -e -s --arg a $A 'all(.[]; .boot_id == $a)' "$T/prev.json" >/dev/null || fail "--boot -1 shows other boots"
"$FRCTL" --store "$T/store" dump --boot 0 --format json >"$T/cur.json"
jq -e -s --arg b $B 'length > 0 and all(.[]; .boot_id == $b)' "$T/cur.json" >/dev/null || fail "--boot 0 wrong"
"$FRCTL" --store "$T/store" dump --boot $A --format json | cmp -s - "$T/prev.json" || fail "--boot ID differs from --boot -1"
"$FRCTL" --store "$T/store" dump --boot -1 --last 30m --format json >"$T/none.json"
[ ! -s "$T/none.json" ] || fail "--boot -1 --last 30m should be empty (that boot ended an hour ago)"
echo "ok: dump --boot -1 / 0 / ID select exactly one boot, and combine with a window"

rc=0
"$FRCTL" --store "$T/store" dump --boot -2 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 1 ] && grep -q 'no such boot here (2 boots: 0 to -1' "$T/err" || fail "--boot -2: rc $rc, $(cat "$T/err")"
rc=0
"$FRCTL" --store "$T/store" dump --boot yesterday 2>"$T/err" >/dev/null || rc=$?
[ "$rc" -eq 2 ] && grep -q 'invalid boot "yesterday"' "$T/err" || fail "--boot yesterday: rc $rc, $(cat "$T/err")"
echo "ok: unknown and malformed boots give one clear line"
