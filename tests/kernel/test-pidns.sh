#!/bin/bash
# A daemon in a private PID namespace (as in a container without
# --pid=host): BPF records host pids, while the daemon's getpid() and /proc
# are the namespace's.  A daemon started under
# `unshare --pid --fork --mount-proc` (it is the namespace's pid 1; its host
# pid is unshare's child), off-CPU threshold 20 ms, keyframes every 2 s; a
# python3 on the host, started before it, sleeps 50 ms at a time; in the
# namespace, a `sleep` is made to get the same pid number as that python3
# has on the host (ns_last_pid):
#   - no record has the daemon's host pid, although it blocks between
#     drains every 100 ms and is on the CPU while it drains (its filter
#     once held getpid(), the namespace's 1: ~110 of its own sample and
#     offcpu records in this test's 5 s);
#   - the python3's offcpu records are there, with comm python3, and no
#     record of its pid is named with the namespace's process of the same
#     number (exe sleep): /proc/PID is not read in a private namespace
#     (keyframes), nor are user frames named or unwound from it;
#   - one warning line at start says so and what to do (--pid=host,
#     hostPID: true); frctl status --json says "pid_namespace": "private",
#     the text status says it too;
# and the same daemon run normally says "host", warns nothing and records
# none of its own pid either.
BUILD=$1
. "$(dirname "$0")/lib.sh"

P=
UPID=
HOSTPID=
pidns_cleanup() {
	# the daemon is the namespace's init: when it ends, so does the
	# `sleep` made in it
	if [ -n "$UPID" ]; then
		[ -n "$HOSTPID" ] || HOSTPID=$(pgrep -P "$UPID" || true)
		if [ -n "$HOSTPID" ]; then
			kill -TERM "$HOSTPID" 2>/dev/null || true
		else # (unshare holds SIGTERM back; its child gets one when it dies)
			kill -KILL "$UPID" 2>/dev/null || true
		fi
		wait "$UPID" 2>/dev/null || true
	fi
	[ -n "$P" ] && { kill "$P" 2>/dev/null || true; wait "$P" 2>/dev/null || true; }
	cleanup
}
trap pidns_cleanup EXIT

cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "2s"; };
sources = { sched = { offcpu_threshold = "20ms"; }; };
CONF
status() { "$FRCTL" --config "$T/fr.conf" --store "$T/store" status "$@"; }

/usr/bin/python3 -c 'import time
while True:
    time.sleep(0.05)' &
P=$!

# --- in a private PID namespace ---
unshare --pid --fork --mount-proc --kill-child=TERM \
	"$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" >>"$T/daemon.log" 2>&1 &
UPID=$!
for _ in $(seq 100); do
	HOSTPID=$(pgrep -P "$UPID" || true)
	[ -n "$HOSTPID" ] && status >/dev/null 2>&1 && break
	kill -0 "$UPID" 2>/dev/null || fail "unshare flightrecd exited during start"
	sleep 0.1
done
status >/dev/null 2>&1 || fail "flightrecd in a PID namespace did not answer status within 10 s"
NSPID=$(awk '/^NSpid:/ { print $3 }' "/proc/$HOSTPID/status")
[ "$NSPID" = 1 ] || fail "flightrecd (host pid $HOSTPID) is not pid 1 of a namespace (NSpid: $NSPID)"

# the namespace's pid $P: a `sleep`, while the host's $P is the python3
# (nsenter's child, sh, is in the namespace: the next pid it forks is
# ns_last_pid + 1)
nsenter --target "$HOSTPID" --pid --mount -- \
	sh -c "echo $((P - 1)) >/proc/sys/kernel/ns_last_pid && { sleep 60 & echo \$!; }" >"$T/impostor" 2>&1 &
for _ in $(seq 50); do [ -s "$T/impostor" ] && break; sleep 0.1; done
[ "$(cat "$T/impostor")" = "$P" ] || fail "the namespace's sleep got pid $(cat "$T/impostor"), not $P (the host python3's)"
ok "daemon: host pid $HOSTPID, pid 1 in its namespace; host python3 and namespace sleep: pid $P"

# what it says of itself, looked at after the records
status --json >"$T/status.json" || fail "status --json failed"
status >"$T/status.txt" || fail "status failed"

# the daemon drains every 100 ms, blocked in between: > 20 ms off CPU;
# two keyframes pass
sleep 4.5
kill -TERM "$HOSTPID"
rc=0
wait "$UPID" || rc=$?
UPID= HOSTPID_DONE=$HOSTPID HOSTPID=
[ "$rc" -eq 0 ] || fail "flightrecd in a PID namespace exited with $rc on SIGTERM"

"$FRCTL" --store "$T/store" dump --format json >"$T/ns.json" || fail "dump failed"
own=$(jq -s --argjson d "$HOSTPID_DONE" '[.[] | select(.pid == $d or .tid == $d)] | length' "$T/ns.json")
[ "$own" -eq 0 ] || fail "$own records of the daemon itself (host pid $HOSTPID_DONE), e.g. $(jq -c --argjson d "$HOSTPID_DONE" 'select(.pid == $d) | {type, pid, comm, duration_ns}' "$T/ns.json" | head -3)"
np=$(jq -s --argjson p "$P" '[.[] | select(.type == "offcpu" and .pid == $p and .comm == "python3")] | length' "$T/ns.json")
[ "$np" -ge 20 ] || fail "only $np offcpu records of the host python3 $P"
ok "no record of the daemon's host pid $HOSTPID_DONE; $np offcpu records of python3 $P"

wrong=$(jq -c -s --argjson p "$P" '[.[] | select(.pid == $p and ((.exe // "") | test("sleep")))] | .[0:2]' "$T/ns.json")
[ "$wrong" = "[]" ] || fail "records of the host's $P named by the namespace's process $P: $wrong"
# a user frame with a module or a name (not a "[...]" marker)
named=$(jq -s '[.[] | select(.stack) | .kernel_frames as $k | .stack[$k:][] |
	select(.module != null or ((.sym // "[") | startswith("[") | not))] | length' "$T/ns.json")
[ "$named" -eq 0 ] || fail "$named user frames named from the namespace's /proc, e.g. $(jq -c 'select(.stack) | .kernel_frames as $k | select(any(.stack[$k:][]; .module != null)) | {pid, comm, user: .stack[$k:]}' "$T/ns.json" | head -1)"
ok "no record named from the namespace's /proc"

jq -e '.pid_namespace == "private"' "$T/status.json" >/dev/null ||
	fail "status --json says pid_namespace $(jq -c .pid_namespace "$T/status.json"), not \"private\""
grep -qi 'PID namespace' "$T/status.txt" || fail "the text status does not mention the private PID namespace: $(cat "$T/status.txt")"
ok "status: pid_namespace private; text: $(grep -i 'PID namespace' "$T/status.txt")"

n=$(grep -c 'PID namespace' "$T/daemon.log" || true)
[ "$n" -eq 1 ] || fail "$n lines about the PID namespace in the log, not 1"
line=$(grep 'PID namespace' "$T/daemon.log")
[[ "$line" == '<4>'* ]] || fail "the PID namespace line is not a warning: $line"
for w in '--pid=host' 'hostPID: true'; do
	grep -qF -- "$w" <<<"$line" || fail "the warning does not say $w: $line"
done
ok "one warning: $line"

# --- the same, in the host's PID namespace ---
rm -rf "$T/store" "$T/daemon.log"
start_daemon "$T/fr.conf"
status --json >"$T/status.json" || fail "status --json failed"
jq -e '.pid_namespace == "host"' "$T/status.json" >/dev/null ||
	fail "status --json says pid_namespace $(jq -c .pid_namespace "$T/status.json"), not \"host\""
status >"$T/status.txt" || fail "status failed"
grep -qi 'PID namespace' "$T/status.txt" && fail "the text status mentions a PID namespace on the host: $(cat "$T/status.txt")"
sleep 1.5
HPID=$DPID
stop_daemon
grep -q 'PID namespace' "$T/daemon.log" && fail "a warning about the PID namespace on the host: $(grep 'PID namespace' "$T/daemon.log")"
"$FRCTL" --store "$T/store" dump --format json >"$T/host.json" || fail "dump failed"
own=$(jq -s --argjson d "$HPID" '[.[] | select(.pid == $d or .tid == $d)] | length' "$T/host.json")
[ "$own" -eq 0 ] || fail "$own records of the daemon itself (pid $HPID) on the host"
np=$(jq -s --argjson p "$P" '[.[] | select(.type == "offcpu" and .pid == $p)] | length' "$T/host.json")
[ "$np" -ge 5 ] || fail "only $np offcpu records of python3 $P on the host"
ok "host: pid_namespace host, no warning, no record of the daemon's pid $HPID, $np of python3"
