#!/bin/bash
# A record of an incident's window can reach the daemon after the window
# has ended: an off-CPU slice is recorded when its task runs again, with
# the time it started.  An incident is written ahead into the spare file
# at its window's end and completed 200 ms later (daemon/trigger.c); a
# slice that began in the window and ended in between must be in it.
# A `sleep 0.53` is started 0.45 s before `frctl freeze` (after = 0): its
# slice starts in the window and ends ~80 ms after the window's end.  No
# sync or chunk age closes the chunk it lands in meanwhile: only the
# incident's own flush can.  The spare file is ready first, so that the
# incident is written ahead (a new file is written whole, after a flush of
# every chunk).  When the host is so slow that the slice ended
# before the window did (nothing late then), or after the incident was
# completed (too late for any), the round is run again.
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "30s"; };
recorder = { chunk_age = "30s"; };
sources = { sched = { offcpu_threshold = "100ms"; }; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "2s"; after = "0s"; cooldown = "0s"; } ); };
CONF
start_daemon "$T/fr.conf"

for round in 1 2 3; do
	# written ahead only into a spare file made ready (after the start,
	# and again after each incident)
	for _ in $(seq 100); do
		[ "$("$FRCTL" --store "$T/store" status --json | jq -r .triggers.spare.state)" = ready ] && break
		sleep 0.05
	done
	[ "$("$FRCTL" --store "$T/store" status --json | jq -r .triggers.spare.state)" = ready ] ||
		fail "the spare incident file is not ready: $("$FRCTL" --store "$T/store" status --json | jq -c .triggers.spare)"
	sleep 0.53 &
	S=$!
	sleep 0.45
	"$FRCTL" --store "$T/store" freeze --reason "late $round" >/dev/null
	wait "$S"
	id=
	for _ in $(seq 100); do
		id=$("$FRCTL" --store "$T/store" incidents --json |
			jq -r --arg r "late $round" '.[] | select(.reason == $r) | .id')
		[ -n "$id" ] && break
		sleep 0.1
	done
	[ -n "$id" ] || fail "no incident for freeze $round"
	end=$("$FRCTL" --store "$T/store" incidents --json | jq -r --arg i "$id" "$JQ_NS"' .[] | select(.id == $i) | .end | ns')
	# the slice as the store has it (the daemon has it by now: it was
	# drained before the incident was completed)
	"$FRCTL" --store "$T/store" dump --last 1m --format json >"$T/store.json"
	slice_end=$(jq -rs --argjson p "$S" "$JQ_NS"' [.[] | select(.type == "offcpu" and .pid == $p)] |
		if length == 1 then (.[0].time | ns) + .[0].duration_ns else "none" end' "$T/store.json")
	[ "$slice_end" != none ] ||
		fail "round $round: not one off-CPU record of sleep ($S) in the store (the incident's flush closes the chunk it is in: no sync or chunk age does before 30 s)"
	if awk -v a="$slice_end" -v b="$end" 'BEGIN { exit !(a <= b) }'; then
		echo "round $round: the sleep's slice ended before the window did (host slow): again"
		continue
	fi
	if awk -v a="$slice_end" -v b="$end" 'BEGIN { exit !(a > b + 180e6) }'; then
		echo "round $round: the sleep's slice ended after the incident was completed (host slow): again"
		continue
	fi
	"$FRCTL" --store "$T/store" dump --incident "$id" --format json >"$T/incident.json"
	jq -se --argjson p "$S" 'any(.[]; .type == "offcpu" and .pid == $p)' "$T/incident.json" >/dev/null ||
		fail "round $round: the off-CPU slice of sleep ($S), begun in the window and recorded $(awk -v a="$slice_end" -v b="$end" 'BEGIN { printf "%.0f", (a - b) / 1e6 }') ms after its end, is not in incident $id"
	ok "a slice begun in the window and recorded $(awk -v a="$slice_end" -v b="$end" 'BEGIN { printf "%.0f", (a - b) / 1e6 }') ms after its end is in the incident (round $round)"
	exit 0
done
fail "in 3 rounds the sleep's slice never ended between the window's end and the incident's: nothing was shown"
