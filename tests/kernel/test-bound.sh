#!/bin/bash
# The store's disk bound: a 1 MiB store receives five times its size of
# incompressible exec records; `du` of the segments never exceeds the bound
# and the newest data survives.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"

BOUND=$((1024 * 1024))
cat >"$T/fr.conf" <<CONF
store = { size = "1M"; segments = 4; sync_interval = "100ms"; };
recorder = { chunk_size = "16K"; };
CONF

start_daemon "$T/fr.conf"

storm_over "$BOUND" "$STORM"
max_du=$MAX_DU written=$WRITTEN used=$USED
echo "written $written bytes into a $BOUND byte store; du peaked at $max_du, now $used"
[ "$max_du" -le "$BOUND" ] || fail "du $max_du exceeds the bound $BOUND"
ok "du of the store never exceeded the bound"

"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"
jq -e -s --arg m "$MARKER" 'any(.[]; .type == "exec" and (.argv | index($m)))' "$T/dump.json" >/dev/null ||
	fail "the newest exec is missing after wrapping"
ok "newest data intact after wrapping $((written / BOUND)) times"
# argv of random bytes: every line must still be strict JSON in valid UTF-8
python3 -c '
import json, sys
n = 0
with open(sys.argv[1], encoding="utf-8", errors="strict") as f:
    for line in f:
        json.loads(line)
        n += 1
print("ok: %d lines of binary-argv records are valid UTF-8 JSON" % n)' "$T/dump.json" || fail "dump is not valid UTF-8 JSON"
lost=$(jq -s '[.[] | select(.type == "gap") | .lost] | add // 0' "$T/dump.json")
echo "gap records in the surviving window account for $lost lost records"
