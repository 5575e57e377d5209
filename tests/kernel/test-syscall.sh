#!/bin/bash
# The syscall source's times, with real BPF (bpf/syscall.bpf.c).  While the
# tick is measured (the first 10 s) every call is stamped with the clock:
# a read() blocked 300 ms on a pipe is recorded within 2 ms of what the
# reader measured.  Then, at the default 100 ms threshold, starts are
# stamped in jiffies: the same read is recorded within a tick (at most
# 10 ms, HZ >= 100) of its start and duration, its duration a whole number
# of ticks; so is a readv() that stays on the CPU (256 MiB from /dev/zero,
# the per-CPU slot's path, where the blocked one went through
# sched_switch and task storage); a 40 ms read and an excluded 300 ms
# nanosleep are not recorded.  A threshold lowered live to 20 ms (fewer
# than 20 ticks) stamps with the clock again: a 50 ms read is recorded
# within 2 ms.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

conf() {
	cat <<CONF
store = { size = "16M"; segments = 4; };
sources = { syscall = { enabled = true; threshold = "$1"; }; };
CONF
}
conf 100ms >"$T/fr.conf"
start_daemon "$T/fr.conf"
T0=$SECONDS

# syscall_of PID: the JSON of PID's longest read or readv record, or null
syscall_of() { "$FRCTL" --store "$T/store" dump --last 10m --format json --pid "$1" --type syscall | jq -s -c '[.[] | select(.syscall == "read" or .syscall == "readv")] | max_by(.duration_ns)'; }
# check_read HELPER_JSON BOUND_NS WHAT: PID's read record starts and lasts
# within BOUND_NS of what the helper measured
check_read() {
	local pid rec
	pid=$(jq .pid <<<"$1")
	# this read's record, not an earlier call of the same pid (a shell
	# that became the program) that reached the store first
	wait_for_record ".type == \"syscall\" and .pid == $pid and (.syscall == \"read\" or .syscall == \"readv\") and
		.duration_ns * 2 >= $(jq .waited_ns <<<"$1")"
	rec=$(syscall_of "$pid")
	jq -e -n --argjson r "$rec" --argjson h "$1" --argjson b "$2" "$JQ_NS"'
		($r.duration_ns - $h.waited_ns | fabs) <= $b and
		(($r.time | ns) - $h.read_start_ns | fabs) <= $b + 1e6' >/dev/null ||
		fail "$3: the record $rec is not within $(($2 / 1000000)) ms of the read $1"
	ok "$3: $(jq .duration_ns <<<"$rec") ns recorded, $(jq .waited_ns <<<"$1") ns measured"
	REC=$rec
}

OUT=$("$HELPERS/fr-block-read" "early-$$" 300)
check_read "$OUT" 2000000 "a 300 ms read while the tick is measured, stamped with the clock"

# a tick (of at most 10 ms) and its lag: 12 ms
sleep $((T0 + 11 - SECONDS > 0 ? T0 + 11 - SECONDS : 0))
OUT=$("$HELPERS/fr-block-read" "late-$$" 300)
check_read "$OUT" 12000000 "a 300 ms read blocked on a pipe, stamped in jiffies"
# jiffies-stamped: a whole number of ticks (HZ 100, 250, 300 or 1000)
jq -e -n --argjson r "$REC" '[10000000, 4000000, 3333333, 1000000] | any($r.duration_ns % . == 0)' >/dev/null ||
	fail "the duration $(jq .duration_ns <<<"$REC") is not a whole number of ticks: the start was not stamped in jiffies"
ok "its duration is a whole number of ticks (jiffies stamp)"

# on the CPU all along: no sched_switch moved its stamp
OUT=$(/usr/bin/python3 - <<'PY'
import json, mmap, os, time
# into fresh anonymous memory: its page faults are part of the call
# (a malloc()ed buffer may be touched before: meson's MALLOC_PERTURB_)
fd = os.open("/dev/zero", os.O_RDONLY)
m = mmap.mmap(-1, 256 << 20)
r0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
n = os.readv(fd, [m])
t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
print(json.dumps({"pid": os.getpid(), "waited_ns": t1 - t0, "read_start_ns": r0, "len": n}))
PY
)
if [ "$(jq .waited_ns <<<"$OUT")" -ge 110000000 ]; then
	check_read "$OUT" 12000000 "a readv of 256 MiB from /dev/zero, on the CPU"
else
	echo "skip: the 256 MiB readv took under 110 ms here ($OUT)"
fi

SHORT=$("$HELPERS/fr-block-read" "short-$$" 40)
python3 -c 'import time; time.sleep(0.3)' & SLEEPER=$!
wait $SLEEPER
# a later slow read: once it is in the store, the short read would be too
OUT=$("$HELPERS/fr-block-read" "after-$$" 300)
wait_for_record ".type == \"syscall\" and .pid == $(jq .pid <<<"$OUT")"
[ "$(syscall_of "$(jq .pid <<<"$SHORT")")" = null ] ||
	fail "a 40 ms read was recorded at a 100 ms threshold: $(syscall_of "$(jq .pid <<<"$SHORT")")"
ok "a 40 ms read is not recorded"
"$FRCTL" --store "$T/store" dump --last 10m --format json --pid "$SLEEPER" --type syscall | grep -q . &&
	fail "the excluded nanosleep of $SLEEPER was recorded"
ok "an excluded 300 ms nanosleep is not recorded"
"$FRCTL" --store "$T/store" dump --last 10m --format json --type syscall | jq -e -s --argjson d "$DPID" 'all(.[]; .pid != $d)' >/dev/null ||
	fail "records from the daemon's own pid $DPID"
ok "nothing from the daemon"

conf 20ms >"$T/fr.conf"
kill -HUP "$DPID"
sleep 0.5
OUT=$("$HELPERS/fr-block-read" "low-$$" 50)
check_read "$OUT" 2000000 "threshold 20 ms, set live: a 50 ms read, stamped with the clock"
