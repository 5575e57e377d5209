#!/bin/bash
# The default configuration on an idle machine: the store must grow by
# less than 1 MiB per minute.  Measured over 30 s after a 5 s warm-up (the
# start-up keyframe) from the bytes the daemon wrote, and printed.
BUILD=$1
. "$(dirname "$0")/lib.sh"

cp "$BUILD/../conf/flightrec.conf" "$T/fr.conf"
start_daemon "$T/fr.conf"
sleep 5
w1=$("$FRCTL" --store "$T/store" status --json | jq .store.bytes_written)
t1=$(date +%s.%N)
sleep 30
w2=$("$FRCTL" --store "$T/store" status --json | jq .store.bytes_written)
t2=$(date +%s.%N)
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
stop_daemon

per_min=$(awk -v a="$w1" -v b="$w2" -v s="$t1" -v e="$t2" 'BEGIN { printf "%.0f", (b - a) * 60 / (e - s) }')
echo "idle growth with the default configuration: $per_min bytes/min ($(awk -v b="$per_min" 'BEGIN { printf "%.1f", b / 1024 }') KiB/min)"
jq -r '.sources | to_entries[] | "  \(.key): \(.value.records) records"' "$T/status.json"
[ "$per_min" -lt $((1024 * 1024)) ] || fail "the store grows $per_min bytes/min on an idle machine (limit 1 MiB/min)"
ok "idle growth under 1 MiB/min"
