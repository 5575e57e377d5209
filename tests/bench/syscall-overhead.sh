#!/bin/bash
# Benchmark (not a test): cost the syscall source adds to a quiet syscall
# (nothing over the threshold), ns per getppid(), flightrecd with the
# default config vs no tracing, alternating runs; prints medians.
#   tests/bench/syscall-overhead.sh BUILD_DIR [REPS]
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-5}
LOOP="$BUILD/tests/bench/getppid-loop"
T=$(mktemp -d /tmp/fr-bench-XXXXXX)
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

base=() ; traced=()
for i in $(seq "$REPS"); do
	base+=("$("$LOOP" 5000000)")
	"$BUILD/daemon/flightrecd" --store "$T/store" >"$T/log" 2>&1 &
	DPID=$!
	for _ in $(seq 50); do "$BUILD/ctl/frctl" --store "$T/store" status >/dev/null 2>&1 && break; sleep 0.1; done
	traced+=("$("$LOOP" 5000000)")
	kill "$DPID"; wait "$DPID" || true; DPID=
done
b=$(printf '%s\n' "${base[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
echo "getppid ns/call, median of $REPS x 5M calls: untraced $b (runs: ${base[*]}), flightrecd default $t (runs: ${traced[*]})"
awk -v b="$b" -v t="$t" 'BEGIN {printf "added cost: %.1f ns per syscall (%.2fx)\n", t - b, t / b}'
