#!/bin/bash
# Full-mode switch records are written to the ring in per-CPU batches
# (bpf/event.h).  A CPU that stays busy holds its last switches; the
# daemon must have them written before each drain, and before it stops:
#   busy    on the last CPU, a task sleeps 20 ms (the CPU goes idle, which
#           writes its batch out), wakes and spins 6 s at real-time
#           priority, so that the CPU does not switch (fr-switch-hold):
#           the switch into it at its wakeup, the newest of its switches
#           on that CPU, reaches the store while it spins
#   stop    the same under a daemon that drains only every 10 s, stopped
#           at once: in the store after, so written by the flush at stop
# and none is dropped or lost in decoding on the way.  What else runs on
# that CPU (kernel threads woken meanwhile) does not matter: the switch
# looked for is the one into the task after its last switch out there,
# whatever ran between.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

[ "$(nproc)" -ge 2 ] || { echo "ok: one CPU: nothing to hold apart (skipped)"; exit 0; }
CPU=$(($(nproc) - 1))
# everything of the test but the helper, the daemon among them, runs on
# CPU 0: nothing the test starts switches on $CPU while the helper spins
taskset -pc 0 $$ >/dev/null
# $1: the drain interval
conf() {
	cat <<CONF
store = { size = "32M"; segments = 4; sync_interval = "50ms"; };
recorder = { drain_interval = "$1"; };
sources = {
  syscall = { enabled = false; }; block = { enabled = false; }; oom = { enabled = false; };
  signal = { enabled = false; }; tcp = { enabled = false; }; sample = { enabled = false; };
  sched = { full = true; offcpu = false; runq = false; };
};
metrics = { enabled = false; };
CONF
}
conf 20ms >"$T/fr.conf"
# no drain (and its flush of the batches) before the stop
conf 10s >"$T/fr-stop.conf"

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

# hold: starts fr-switch-hold on $CPU; sets SPIN once it spins
hold() {
	# never the last one's pid: the file is the new helper's
	rm -f "$T/hold.out"
	"$HELPERS/fr-switch-hold" "$CPU" 6 >"$T/hold.out" &
	HOLD=$!
	for _ in $(seq 100); do
		[ -s "$T/hold.out" ] && break
		sleep 0.05
	done
	read -r SPIN <"$T/hold.out" || fail "fr-switch-hold did not start"
}
# in dump $1, the switches on $CPU into the spinner after its last switch
# out there (its sleep): 1 once the held one is in; times of one CPU's
# switches compare (the same clock); "none" when no switch out is in
held() {
	jq -rs --argjson p "$SPIN" --argjson cpu "$CPU" '
		[.[] | select(.type == "switch" and .cpu == $cpu)] as $s |
		([$s[] | select(.tid == $p) | .time] | max) as $out |
		if $out == null then "none"
		else [$s[] | select(.next_tid == $p and .time > $out)] | length end' "$1"
}

start_daemon "$T/fr.conf"
hold
# EPOCHREALTIME: bash's clock, no process per look (those run on CPU 0
# all the same)
t0=${EPOCHREALTIME/[.,]/}
seen=0 waited=0
while [ "$waited" -lt 800000 ]; do
	"$FRCTL" --store "$T/store" dump --last 1m --format json >"$T/busy.json"
	seen=$(held "$T/busy.json")
	waited=$((${EPOCHREALTIME/[.,]/} - t0))
	[ "$seen" != none ] && [ "$seen" -ge 1 ] && break
	sleep 0.05
done
# within 0.8 s: the real-time spinner lets nothing else switch on its CPU
# for 0.95 s, and a drain interval is 20 ms (without the daemon asking,
# the switches came 1.1-1.8 s after; with it, 0.15 s)
[ "$seen" != none ] && [ "$seen" -ge 1 ] ||
	fail "the switch into the spinner on CPU $CPU at its wakeup is not in the store within 0.8 s ($seen after its switch out)"
kill -0 "$HOLD" 2>/dev/null || fail "fr-switch-hold ended before its switch was seen: nothing shown"
ok "busy: the switch into the spinner on CPU $CPU reached the store while the CPU stayed busy, after $((waited / 1000)) ms"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -e '.sources.sched.records > 0 and .sources.sched.dropped == 0 and
	all(.per_cpu[]; .dropped == 0 and .lost_decode == 0 and .lost_write == 0 and .delivered <= .emitted)' \
	"$T/status.json" >/dev/null || fail "switch records dropped or lost: $(cat "$T/status.json")"
ok "none dropped or lost; delivered per CPU within emitted"
end_hold
stop_daemon

start_daemon "$T/fr-stop.conf"
hold
stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/stop.json"
seen=$(held "$T/stop.json")
[ "$seen" != none ] && [ "$seen" -ge 1 ] ||
	fail "the switch into the spinner on CPU $CPU at its wakeup is not in the store after stopping ($seen after its switch out)"
ok "stop: held switches were written before the daemon stopped ($seen seen)"
end_hold
