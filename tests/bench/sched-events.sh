#!/bin/bash
# Benchmark (not a test): the cost of recording every context switch, next
# to perf.  The workload is `perf bench sched pipe -l LOOPS` (two tasks
# ping-ponging over pipes: two switches per loop).  Alternately, REPS times:
#   none        nothing recording
#   flightrecd  only the sched source, in full mode (a switch record per
#               context switch), default ring/chunk/zstd settings
#   perf        perf record -e sched:sched_switch -a
#   perf-z      the same with -z (zstd-compressed perf.data)
# Per mode: CPU of the workload (its cpuacct cgroup's usage, in ns: the
# probes' time in the switching tasks counts; /usr/bin/time's 10 ms steps
# were 25 ns an event) plus CPU of the recorder process, minus the
# same without recording, divided by the events recorded = CPU per event.
# Bytes per event: what went to disk (flightrecd: chunk bytes written;
# perf: the size of perf.data) over the events it holds.  Drops: flightrecd
# counts them per source; perf's LOST events.
# Targets (issue 9): CPU per event <= 0.33x perf's; bytes per event <=
# 0.3x perf -z's.
#   tests/bench/sched-events.sh BUILD_DIR [REPS] [LOOPS]
# FR_MODES="none flightrecd" runs only those modes; FR_BENCH_DEBUG=1 prints
# each run's workload and recorder CPU apart.
BUILD=${1:-build}
REPS=${2:-3}
LOOPS=${3:-200000}
. "$(dirname "$0")/lib.sh"
need_tracefs
FRCTL="$BUILD/ctl/frctl"

write_sched_conf "$T/sched.conf"

# the workload's cgroup: CG, usage_s (lib.sh)
bench_cgroup
# workload, pinned to CPU 0 (both tasks on one CPU: the same switches every
# run; the recorder has the other CPU): prints the CPU seconds of perf
# bench and its children
workload() {
	local u0 u1
	u0=$(usage_s)
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
		taskset -c 0 perf bench sched pipe -l "$LOOPS" >/dev/null 2>&1
	u1=$(usage_s)
	awk -v a="$u0" -v b="$u1" 'BEGIN { printf "%.6f\n", b - a }'
}

declare -A cpu events bytes drops
modes="${FR_MODES:-none flightrecd perf perf-z}"
for i in $(seq "$REPS"); do
	for m in $modes; do
		c0=0 e=0 b=0 d=0
		case $m in
		flightrecd)
			start_flightrecd "$T/sched.conf"
			st0=$("$FRCTL" --store "$T/store" --socket "$T/control.sock" status --json)
			c0=$(cpu_of "$TOOL") ;;
		perf*)
			z=; [ "$m" = perf-z ] && z=-z
			rm -f "$T/perf.data"
			# perf has no readiness signal: it is set up well within a second
			perf record -q -e sched:sched_switch -a $z -o "$T/perf.data" >/dev/null 2>"$T/perf.log" &
			TOOL=$!
			sleep 1
			c0=$(cpu_of "$TOOL") ;;
		esac
		wcpu=$(workload)
		c1=0; [ -n "$TOOL" ] && c1=$(cpu_of "$TOOL")
		case $m in
		flightrecd)
			st1=$("$FRCTL" --store "$T/store" --socket "$T/control.sock" status --json)
			stop_tool
			# records and drops of the sched source, bytes written, during the workload
			e=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sched.records - $a.sources.sched.records')
			d=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sched.dropped - $a.sources.sched.dropped')
			b=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.store.bytes_written - $a.store.bytes_written') ;;
		perf*)
			stop_tool
			e=$(perf report -i "$T/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
			d=$(perf report -i "$T/perf.data" --stats 2>/dev/null | awk '/LOST events:/ { print $3; exit }')
			b=$(stat -c %s "$T/perf.data") ;;
		esac
		[ -n "${FR_BENCH_DEBUG:-}" ] && echo "$m workload $wcpu recorder $(calc "$c1 - $c0")" >&2
		cpu[$m]+="$(awk -v w="$wcpu" -v a="$c0" -v b="$c1" 'BEGIN { printf "%.4f", w + b - a }') "
		events[$m]+="${e:-0} "; bytes[$m]+="${b:-0} "; drops[$m]+="${d:-0} "
	done
done

med() { tr ' ' '\n' <<<"$1" | grep . | median; }
machine
echo "workload: perf bench sched pipe -l $LOOPS; $REPS alternating runs per mode"
base=$(med "${cpu[none]}")
printf '%-11s %9s %12s %10s %12s %8s  %s\n' mode "CPU s" "events" "ns/event" "bytes/event" drops "CPU runs"
declare -A per_ns per_b
for m in $modes; do
	c=$(med "${cpu[$m]}"); e=$(med "${events[$m]}"); b=$(med "${bytes[$m]}"); d=$(med "${drops[$m]}")
	if [ "$m" = none ]; then
		printf '%-11s %9s %12s %10s %12s %8s  %s\n' "$m" "$c" - - - - "${cpu[$m]}"
		continue
	fi
	per_ns[$m]=$(awk -v c="$c" -v base="$base" -v e="$e" 'BEGIN { printf "%.0f", (e ? 1e9 * (c - base) / e : 0) }')
	per_b[$m]=$(awk -v b="$b" -v e="$e" 'BEGIN { printf "%.2f", (e ? b / e : 0) }')
	printf '%-11s %9s %12s %10s %12s %8s  %s\n' "$m" "$c" "$e" "${per_ns[$m]}" "${per_b[$m]}" "$d" "${cpu[$m]}"
done
r_cpu=$(awk -v a="${per_ns[flightrecd]}" -v b="${per_ns[perf]}" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
r_bytes=$(awk -v a="${per_b[flightrecd]}" -v b="${per_b[perf-z]}" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
m_cpu=$(awk -v r="$r_cpu" 'BEGIN { print (r <= 0.33) ? "true" : "false" }')
m_bytes=$(awk -v r="$r_bytes" 'BEGIN { print (r <= 0.3) ? "true" : "false" }')
echo "CPU per event: ${r_cpu}x perf's (target <= 0.33: $m_cpu); bytes per event: ${r_bytes}x perf -z's (target <= 0.3: $m_bytes)"
result "CPU per recorded event (sched_switch, full mode)" "ns CPU per event" "${per_ns[flightrecd]}" "${per_ns[perf]}" \
	"perf record -e sched:sched_switch -a" "$r_cpu" "<= 0.33" "$m_cpu"
result "bytes per event on disk (sched_switch)" "bytes per event" "${per_b[flightrecd]}" "${per_b[perf-z]}" \
	"perf record -z -e sched:sched_switch -a" "$r_bytes" "<= 0.3" "$m_bytes"
