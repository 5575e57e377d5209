#!/bin/bash
# Not a benchmark: where recording every context switch goes, to explain
# sched-events.sh and max-rate.sh.  flightrecd in sched full mode records
# switch-gen's switches at RATE/s (on every CPU) for DUR seconds with
# kernel.bpf_stats_enabled=1, while perf record -g samples the daemon
# (cpu-clock).  Prints each of the daemon's BPF programs' runs and ns per
# run, the daemon's own CPU per event, and the daemon's hottest symbols.
#   tests/bench/profile-sched.sh BUILD_DIR [RATE] [DUR_S]
BUILD=${1:-build}
RATE=${2:-200000}
DUR=${3:-10}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
GEN="$BUILD/tests/bench/switch-gen"

write_sched_conf "$T/sched.conf"

bpf_stats_on
start_flightrecd "$T/sched.conf"
DPID=$TOOL
bpf_prog_times "$DPID" >"$T/b0"
st0=$(frstatus); c0=$(cpu_of "$DPID")
perf record -q -g -p "$DPID" -o "$T/perf.data" >/dev/null 2>&1 & PPID_=$!
BENCH_PIDS+=("$PPID_")
pids=()
n=$(nproc)
for c in $(seq 0 $((n - 1))); do taskset -c "$c" "$GEN" $((RATE / n)) "$DUR" >"$T/gen.$c" & pids+=($!); done
wait "${pids[@]}"
sleep 0.3
st1=$(frstatus); c1=$(cpu_of "$DPID")
bpf_prog_times "$DPID" >"$T/b1"
kill -INT "$PPID_"; wait "$PPID_" 2>/dev/null || true; BENCH_PIDS=()
stop_tool
bpf_stats_off

e=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sched.records - $a.sources.sched.records')
d=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sched.dropped - $a.sources.sched.dropped')
got=$(cat "$T"/gen.* | awk '{ s += $1 } END { print s }')
machine
echo "switch-gen asked $RATE/s, achieved $got/s for ${DUR}s; $e records, $d dropped"
echo "BPF programs (kernel.bpf_stats_enabled=1): runs, ns per run, ns per record"
join <(sort "$T/b0") <(sort "$T/b1") | awk -v e="$e" '{ r = $4 - $2; t = $5 - $3; if (r > 0) printf "  %-24s %10d runs %8.0f ns/run %8.0f ns/record\n", $1, r, t / r, (e ? t / e : 0) }'
echo "daemon CPU: $(calc "$c1 - $c0") s = $(calc "($e > 0) ? 1e9 * ($c1 - $c0) / $e : 0") ns per record"
echo "daemon's CPU by object (perf record -g -p, cpu-clock, self time):"
perf report -i "$T/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -8
echo "daemon's hottest symbols (perf record -g -p, cpu-clock, self time):"
perf report -i "$T/perf.data" --no-children --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -${TOP:-15}
