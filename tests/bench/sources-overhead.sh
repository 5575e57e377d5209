#!/bin/bash
# Benchmark (not a test): what the default always-on configuration costs
# three workloads, each run alternately without and with flightrecd
# (REPS times), medians printed with the slowdown:
#   cpu      a pure CPU loop, one per CPU (sampling-free recording should
#            cost nothing here)
#   syscall  5 M getppid() calls (every call passes the syscall probes)
#   sched    perf bench sched messaging (context switches, wakeups, pipes)
#   tests/bench/sources-overhead.sh BUILD_DIR [REPS]
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-5}
T=$(mktemp -d /tmp/fr-bench-XXXXXX)
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
now() { date +%s.%N; }

cpu() {
	local pids=() t0 t1
	t0=$(now)
	for _ in $(seq "$(nproc)"); do "$BUILD/tests/bench/cpu-hog" 400000000 >/dev/null 2>&1 & pids+=($!); done
	wait "${pids[@]}"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
syscall() { "$BUILD/tests/bench/getppid-loop" 5000000 | awk '{ printf "%.3f", $1 * 5000000 / 1e9 }'; }
sched() { perf bench sched messaging -g 10 -l 1000 2>/dev/null | awk '/Total time/ { print $3 }'; }

start() {
	"$BUILD/daemon/flightrecd" --config "$BUILD/../conf/flightrec.conf" --store "$T/store" >"$T/log" 2>&1 &
	DPID=$!
	for _ in $(seq 50); do "$BUILD/ctl/frctl" --store "$T/store" status >/dev/null 2>&1 && return; sleep 0.1; done
	echo "flightrecd did not start" >&2; exit 1
}
stop() { kill "$DPID"; wait "$DPID" || true; DPID=; }

declare -A base traced
for w in cpu syscall sched; do base[$w]=""; traced[$w]=""; done
for i in $(seq "$REPS"); do
	for w in cpu syscall sched; do base[$w]+="$($w) "; done
	start
	for w in cpu syscall sched; do traced[$w]+="$($w) "; done
	stop
done
echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git -C "$BUILD/.." rev-parse --short HEAD 2>/dev/null || echo ?)"
printf '%-8s %12s %12s %9s   runs (s) without | with\n' workload "without (s)" "with (s)" slowdown
for w in cpu syscall sched; do
	b=$(tr ' ' '\n' <<<"${base[$w]}" | grep . | median)
	t=$(tr ' ' '\n' <<<"${traced[$w]}" | grep . | median)
	printf '%-8s %12s %12s %8.1f%%   %s| %s\n' "$w" "$b" "$t" "$(awk -v b="$b" -v t="$t" 'BEGIN { print 100 * (t - b) / b }')" "${base[$w]}" "${traced[$w]}"
done
