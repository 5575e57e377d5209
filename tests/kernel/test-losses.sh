#!/bin/bash
# Losses are data: with the daemon frozen (SIGSTOP) while an exec storm
# fills 8 KiB rings, BPF counts every failed reserve; per CPU, emitted =
# delivered + dropped, and the gap records in the store add up to exactly
# the dropped counts.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
recorder = { ring_size = "8K"; };
store = { size = "16M"; segments = 4; };
CONF
start_daemon "$T/fr.conf"

kill -STOP "$DPID"
"$STORM" 300
kill -CONT "$DPID"
sleep 1.5   # a drain tick turns the drops into gaps; a sync writes them

"$FRCTL" --store "$T/store" status --json >"$T/status.json"
stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"

dropped=$(jq '[.per_cpu[].dropped] | add' "$T/status.json")
[ "$dropped" -gt 0 ] || fail "no drops with 8K rings and a frozen daemon: $(cat "$T/status.json")"
jq -e 'all(.per_cpu[]; .emitted == .delivered + .dropped)' "$T/status.json" >/dev/null ||
	fail "emitted != delivered + dropped: $(jq -c .per_cpu "$T/status.json")"
ok "per CPU, emitted = delivered + dropped ($dropped dropped)"

for cpu in $(jq '.per_cpu[].cpu' "$T/status.json"); do
	want=$(jq --argjson c "$cpu" '.per_cpu[] | select(.cpu == $c) | .dropped' "$T/status.json")
	got=$(jq -s --argjson c "$cpu" '[.[] | select(.type == "gap" and .cpu == $c) | .lost] | add // 0' "$T/dump.json")
	[ "$want" -eq "$got" ] || fail "cpu $cpu: $want dropped in BPF but gaps in the store say $got"
done
ok "gap records in the store account for every dropped record, per CPU"
"$FRCTL" --store "$T/store" dump --type gap >"$T/gaps.txt"
grep -q 'records lost on this CPU' "$T/gaps.txt" || fail "text dump does not show the gap"
ok "text dump shows the gaps"
