#!/bin/bash
# Runs every benchmark (as root; never part of `meson test`), one after the
# other, each result appended as a JSON line to one file, then writes the
# generated part of BENCHMARKS.md from it (tests/bench/report.sh).  A
# benchmark that fails is named in the report; the others still run.
#   tests/bench/run-all.sh [BUILD_DIR] [OUT_JSON]
#   QUICK=1 tests/bench/run-all.sh      a short validation pass (minutes; its
#                                       numbers are not results)
#   ONLY="memory retention" ...         a subset
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-results.json}
export QUICK=${QUICK:-0}
export FR_BENCH_JSON=$OUT
[ "$(id -u)" -eq 0 ] || { echo "run-all.sh loads BPF and runs perf system-wide: run it as root" >&2; exit 1; }
ninja -C "$BUILD" >/dev/null || exit 1
: >"$OUT"
LOG=${OUT%.json}.log
: >"$LOG"

# name and command line (QUICK passes smaller sizes to the scripts that
# take them as arguments; the others read QUICK themselves)
# (full sizes: several repetitions each, bounded so the whole run takes
# about half an hour on 2 CPUs)
if [ "$QUICK" = 1 ]; then
	q_sys="1" q_sched="1 50000" q_dump="1 60" q_rate="1" q_over="" q_mem="" q_ret="" q_srv=""
else
	# (max-rate: 5 repetitions of its four 15 s runs, ~6 min, as its
	# table rows were measured)
	q_sys="5" q_sched="7 200000" q_dump="5 600" q_rate="5" q_over="5" q_mem="2" q_ret="300" q_srv="6 8"
fi
benches=(
	"syscall-overhead:tests/bench/syscall-overhead.sh $BUILD $q_sys"
	"sched-events:tests/bench/sched-events.sh $BUILD $q_sched"
	"max-rate:tests/bench/max-rate.sh $BUILD $q_rate"
	"sources-overhead:tests/bench/sources-overhead.sh $BUILD $q_over"
	"sampling-overhead:tests/bench/sampling-overhead.sh $BUILD"
	"stacks:tests/bench/stacks.sh $BUILD"
	"offcpu-stacks:tests/bench/offcpu-stacks.sh $BUILD"
	"dump-window:tests/bench/dump-window.sh $BUILD"
	"dump-speed:tests/bench/dump-speed.sh $BUILD $q_dump"
	"dump-full-store:tests/bench/dump-full-store.sh $BUILD"
	"memory:tests/bench/memory.sh $BUILD $q_mem"
	"memory-compile:env WORKLOAD=compile PEER=0 tests/bench/memory.sh $BUILD 1" # issue 48's peak: clean builds back to back, 150 s
	"incident-latency:tests/bench/incident-latency.sh $BUILD"
	"retention:tests/bench/retention.sh $BUILD $q_ret"
	"report-html:tests/bench/report-html.sh $BUILD"
	"report-baseline:tests/bench/report-baseline.sh $BUILD"
	"rules-day:tests/bench/rules-day.sh $BUILD"
	"wakers:tests/bench/wakers.sh $BUILD"
	"python-frames:tests/bench/python-frames.sh $BUILD"
	"servers:tests/bench/servers.sh $BUILD $q_srv" # ~30 min of its own (6 rounds x 6 modes)
)
failed=()
for b in "${benches[@]}"; do
	name=${b%%:*} cmd=${b#*:}
	if [ -n "${ONLY:-}" ] && ! grep -qw "$name" <<<"$ONLY"; then continue; fi
	# the writeback the benchmark before left is written out first
	# (incident-latency measured 3.20x fio right after the compile loop,
	# 1.38x run alone after a sync: BENCHMARKS.md, 2026-12-05)
	sync
	echo "=== $name: $cmd ($(date -u +%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$LOG"
	t0=$(date +%s)
	$cmd 2>&1 | tee -a "$LOG"
	rc=${PIPESTATUS[0]}
	# one that failed at once is run again after a pause, once: the
	# servers exited in 0 s after python-frames' load on 2026-12-06 and
	# ran normally by hand a minute later
	if [ "$rc" -ne 0 ] && [ $(($(date +%s) - t0)) -lt 10 ]; then
		echo "=== $name: exit status $rc after $(($(date +%s) - t0)) s; again in 60 s (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$LOG"
		sleep 60
		sync
		t0=$(date +%s)
		$cmd 2>&1 | tee -a "$LOG"
		rc=${PIPESTATUS[0]}
	fi
	[ "$rc" -eq 0 ] || failed+=("$name")
	echo "=== $name: $(($(date +%s) - t0)) s, exit status $rc" | tee -a "$LOG"
done
echo "results: $OUT; log: $LOG"
tests/bench/report.sh "$OUT" "$LOG" "${failed[*]}" BENCHMARKS.md
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
