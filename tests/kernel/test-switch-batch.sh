#!/bin/bash
# Full-mode switch records are written to the ring in per-CPU batches
# (bpf/event.h).  A CPU that stays busy holds its last switches; the
# daemon must have them written before each drain, and before it stops:
#   busy    on the last CPU, a parent and child pass a byte, then the
#           parent spins 6 s at real-time priority, so that the CPU does
#           not switch (fr-switch-hold): the child's switch to the parent
#           reaches the store while it spins
#   stop    the same, the daemon stopped at once: in the store after
# and none is dropped or lost in decoding on the way.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

[ "$(nproc)" -ge 2 ] || { echo "ok: one CPU: nothing to hold apart (skipped)"; exit 0; }
CPU=$(($(nproc) - 1))
ROUNDS=1
# everything of the test but the helper, the daemon among them, runs on
# CPU 0: nothing the test starts switches on $CPU while the helper spins
taskset -pc 0 $$ >/dev/null
cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 4; sync_interval = "50ms"; };
recorder = { drain_interval = "20ms"; };
sources = {
  syscall = { enabled = false; }; block = { enabled = false; }; oom = { enabled = false; };
  signal = { enabled = false; }; tcp = { enabled = false; }; sample = { enabled = false; };
  sched = { full = true; offcpu = false; runq = false; };
};
metrics = { enabled = false; };
CONF

HOLD=
end_hold() {
	if [ -n "$HOLD" ]; then
		kill "$HOLD" 2>/dev/null || true
		wait "$HOLD" 2>/dev/null || true
	fi
	HOLD=
	return 0
}
trap 'end_hold; cleanup' EXIT

# hold: starts fr-switch-hold on $CPU; sets PARENT and CHILD once its
# rounds are done
hold() {
	"$HELPERS/fr-switch-hold" "$CPU" "$ROUNDS" 6 >"$T/hold.out" &
	HOLD=$!
	for _ in $(seq 100); do
		[ -s "$T/hold.out" ] && break
		sleep 0.05
	done
	read -r PARENT CHILD <"$T/hold.out" || fail "fr-switch-hold did not start"
}
# the child's switches to its parent in dump $1
child_to_parent() {
	jq -s --argjson c "$CHILD" --argjson p "$PARENT" \
		'[.[] | select(.type == "switch" and .tid == $c and .next_tid == $p)] | length' "$1"
}

start_daemon "$T/fr.conf"
hold
# EPOCHREALTIME: bash's clock, no process per look (those run on CPU 0
# all the same)
t0=${EPOCHREALTIME/[.,]/}
seen=0 waited=0
while [ "$waited" -lt 800000 ]; do
	"$FRCTL" --store "$T/store" dump --last 1m --format json >"$T/busy.json"
	seen=$(child_to_parent "$T/busy.json")
	waited=$((${EPOCHREALTIME/[.,]/} - t0))
	[ "$seen" -ge "$ROUNDS" ] && break
	sleep 0.05
done
# within 0.8 s: the real-time spinner lets nothing else switch on its CPU
# for 0.95 s, and a drain interval is 20 ms (without the daemon asking,
# the switches came 1.1-1.8 s after; with it, 0.15 s)
[ "$seen" -ge "$ROUNDS" ] || fail "$seen of the child's $ROUNDS switches to its parent in the store within 0.8 s"
kill -0 "$HOLD" 2>/dev/null || fail "fr-switch-hold ended before its switches were seen: nothing shown"
ok "busy: the child's switch to its parent on CPU $CPU reached the store while the CPU stayed busy, after $((waited / 1000)) ms"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -e '.sources.sched.records > 0 and .sources.sched.dropped == 0 and
	all(.per_cpu[]; .dropped == 0 and .lost_decode == 0 and .lost_write == 0 and .delivered <= .emitted)' \
	"$T/status.json" >/dev/null || fail "switch records dropped or lost: $(cat "$T/status.json")"
ok "none dropped or lost; delivered per CPU within emitted"
end_hold

hold
stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/stop.json"
seen=$(child_to_parent "$T/stop.json")
[ "$seen" -ge "$ROUNDS" ] || fail "$seen of the child's $ROUNDS switches to its parent in the store after stopping"
ok "stop: held switches were written before the daemon stopped ($seen seen)"
end_hold
