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

stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"

# the counts from the daemon's last word on losses, logged once it has
# detached and drained: a status taken while it runs can see a record
# emitted (anything exec'ing meanwhile) but not drained yet
acct=$(grep -oP 'CPU \d+: \d+ records emitted, \d+ delivered, \d+ dropped' "$T/daemon.log" | tr -dc '0-9 \n' |
	awk '{ print $1, $2, $3, $4 }')
[ -n "$acct" ] || fail "no accounting lines in the daemon log: $(cat "$T/daemon.log")"
dropped=$(awk '{ s += $4 } END { print s }' <<<"$acct")
[ "$dropped" -gt 0 ] || fail "no drops with 8K rings and a frozen daemon: $acct"
while read -r cpu emitted delivered cpu_dropped; do
	[ "$emitted" -eq $((delivered + cpu_dropped)) ] ||
		fail "cpu $cpu: emitted $emitted != delivered $delivered + dropped $cpu_dropped"
done <<<"$acct"
ok "per CPU, emitted = delivered + dropped ($dropped dropped)"

while read -r cpu _ _ want; do
	got=$(jq -s --argjson c "$cpu" '[.[] | select(.type == "gap" and .cpu == $c) | .lost] | add // 0' "$T/dump.json")
	[ "$want" -eq "$got" ] || fail "cpu $cpu: $want dropped in BPF but gaps in the store say $got"
done <<<"$acct"
ok "gap records in the store account for every dropped record, per CPU"
"$FRCTL" --store "$T/store" dump --type gap >"$T/gaps.txt"
grep -q 'records lost on this CPU' "$T/gaps.txt" || fail "text dump does not show the gap"
ok "text dump shows the gaps"
