#!/bin/bash
# Benchmark (not a test): how many hours of history a 1 GiB store holds with
# the shipped default configuration on a busy machine.  flightrecd runs
# for DUR seconds (180) while perf bench sched messaging loops and stress-ng
# --cpu 1 --get 1 runs; the store's bytes written (frctl status --json,
# store.bytes_written: chunks as written, headers included) over the time
# between two status reads after a warm-up gives bytes per second;
# 1 GiB / that rate is the retention.  EXTRAPOLATED from DUR seconds, not
# observed for hours.  No peer; printed only.
#   tests/bench/retention.sh BUILD_DIR [DUR_S]     QUICK=1: 20 s
BUILD=${1:-build}
DUR=${2:-180}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
[ "$QUICK" = 1 ] && DUR=20
CONF="$BUILD/../conf/flightrec.conf"
WARM=5

start_flightrecd "$CONF"
stress-ng --cpu 1 --get 1 -t $((DUR + WARM + 5)) >/dev/null 2>&1 & BENCH_PIDS+=($!)
# the loop stops at its next turn when $T/stop exists (killing perf bench
# mid-run would leave its workers blocked on their pipes)
( while [ ! -e "$T/stop" ]; do perf bench sched messaging -g 4 -l 200 >/dev/null 2>&1; done ) & LOOP=$!
sleep "$WARM"
st0=$(frstatus); t0=$(now)
sleep "$DUR"
st1=$(frstatus); t1=$(now)
touch "$T/stop"
wait "$LOOP"
kill "${BENCH_PIDS[@]}" 2>/dev/null || true
wait "${BENCH_PIDS[@]}" 2>/dev/null || true
BENCH_PIDS=()
stop_tool

bytes=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.store.bytes_written - $a.store.bytes_written')
recs=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.records_total // 0 | . - ($a.records_total // 0)' 2>/dev/null || echo 0)
rate=$(calc "$bytes / ($t1 - $t0)")
hours=$(calc "1073741824 / $rate / 3600")
machine
echo "default configuration, busy machine (perf bench sched messaging loop + stress-ng --cpu 1 --get 1), ${DUR}s measured after ${WARM}s"
printf 'store written: %s bytes in %.1f s = %.0f bytes/s (%.1f MiB/h)\n' "$bytes" "$(calc "$t1 - $t0")" "$rate" "$(calc "$rate * 3600 / 1048576")"
printf 'a 1 GiB store would hold %.1f hours of history (EXTRAPOLATED from %s s)\n' "$hours" "$DUR"
result "retention of a 1 GiB store, default config, busy machine (extrapolated)" "hours" "$hours" null "-" null \
	"print it" null "$(jq -cn --argjson r "$rate" --argjson d "$DUR" '{bytes_per_s: $r, measured_s: $d, extrapolated: true}')"
