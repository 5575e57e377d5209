#!/bin/bash
# Benchmark (not a test): what always-on CPU sampling costs a CPU-bound
# workload, next to the tool people would use instead.  Alternately, REPS
# times each, runs one CPU loop per CPU (tests/bench/cpu-hog) with
#   none       nothing recording
#   flightrecd only the sample source, at its default 49 Hz (stacks named
#              and written to the store as they come)
#   perf       perf record -a -g -F 49 (frame-pointer call graphs, to a file)
# and prints, per mode, the median wall time of the workload, its slowdown,
# and the CPU the recorder's process itself used per second of workload
# (/proc/PID/task/*/schedstat; the in-kernel sampling work runs in the
# sampled tasks' context and shows in the slowdown).  A last run with kernel.bpf_stats_enabled=1 gives
# the BPF program's own cost per sample.
#   tests/bench/sampling-overhead.sh BUILD_DIR [REPS] [ITERATIONS]
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-5}
ITER=${3:-1500000000}
T=$(mktemp -d /tmp/fr-bench-XXXXXX)
TOOL=
cleanup() {
	[ -n "$TOOL" ] && kill -INT "$TOOL" 2>/dev/null && wait "$TOOL" 2>/dev/null
	sysctl -q kernel.bpf_stats_enabled="${STATS0:-0}" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
STATS0=$(sysctl -n kernel.bpf_stats_enabled)

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
now() { date +%s.%N; }
# CPU seconds process $1 has run so far, all its threads (ns precision,
# unlike the tick-counted utime/stime)
cpu_of() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.6f", s / 1e9 }'; }

workload() {
	local pids=() t0 t1
	t0=$(now)
	for _ in $(seq "$(nproc)"); do "$BUILD/tests/bench/cpu-hog" "$ITER" >/dev/null 2>&1 & pids+=($!); done
	wait "${pids[@]}"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

cat >"$T/sample.conf" <<CONF
sources = {
  proc = { enabled = false; }; syscall = { enabled = false; }; sched = { enabled = false; };
  block = { enabled = false; }; oom = { enabled = false; }; signal = { enabled = false; };
  tcp = { enabled = false; }; sample = { enabled = true; hz = 49; };
};
metrics = { enabled = false; };
CONF

start() {
	case $1 in
	none) TOOL= ;;
	flightrecd)
		rm -rf "$T/store"
		"$BUILD/daemon/flightrecd" --config "$T/sample.conf" --store "$T/store" >"$T/log" 2>&1 &
		TOOL=$!
		for _ in $(seq 100); do "$BUILD/ctl/frctl" --store "$T/store" status >/dev/null 2>&1 && return; sleep 0.1; done
		echo "flightrecd did not start: $(cat "$T/log")" >&2; exit 1 ;;
	perf)
		perf record -q -a -g -F 49 -o "$T/perf.data" >/dev/null 2>"$T/perf.log" &
		TOOL=$!
		sleep 1 ;; # perf has no readiness signal; it is set up well within this
	esac
}
stop() {
	[ -n "$TOOL" ] || return 0
	kill -INT "$TOOL"
	wait "$TOOL" || true
	TOOL=
}

declare -A wall cpu
modes="none flightrecd perf"
for m in $modes; do wall[$m]=""; cpu[$m]=""; done
for i in $(seq "$REPS"); do
	for m in $modes; do
		start "$m"
		c0=0; [ -n "$TOOL" ] && c0=$(cpu_of "$TOOL")
		w=$(workload)
		c1=0; [ -n "$TOOL" ] && c1=$(cpu_of "$TOOL")
		stop
		wall[$m]+="$w "
		cpu[$m]+="$(awk -v a="$c0" -v b="$c1" -v w="$w" 'BEGIN { printf "%.2f", 1000 * (b - a) / w }') "
	done
done

# the BPF program's own time per run, in a separate run (stats cost a little)
sysctl -q kernel.bpf_stats_enabled=1
start flightrecd
workload >/dev/null
prog=$(bpftool -j prog show | jq -r '[.[] | select(.name == "fr_sample")][0] | "\(.run_cnt) \(.run_time_ns)"')
stop
sysctl -q kernel.bpf_stats_enabled="$STATS0"

echo "kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git -C "$BUILD/.." rev-parse --short HEAD 2>/dev/null || echo ?)"
echo "workload: $(nproc) x cpu-hog $ITER, $REPS runs per mode, alternating"
b=$(tr ' ' '\n' <<<"${wall[none]}" | grep . | median)
printf '%-11s %10s %9s %14s   runs (s)\n' mode "wall (s)" slowdown "tool CPU ms/s"
for m in $modes; do
	w=$(tr ' ' '\n' <<<"${wall[$m]}" | grep . | median)
	c=$(tr ' ' '\n' <<<"${cpu[$m]}" | grep . | median)
	printf '%-11s %10s %8.2f%% %14s   %s\n' "$m" "$w" "$(awk -v b="$b" -v t="$w" 'BEGIN { print 100 * (t - b) / b }')" "$c" "${wall[$m]}"
done
read -r cnt ns <<<"$prog"
[ "$cnt" != null ] && [ "${cnt:-0}" -gt 0 ] &&
	echo "fr_sample BPF program: $cnt runs, $(awk -v c="$cnt" -v n="$ns" 'BEGIN { printf "%.0f", n / c }') ns per sample (kernel.bpf_stats_enabled run)"
