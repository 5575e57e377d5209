#!/bin/bash
# Benchmark (not a test): how long printing a recorded 60 s window takes,
# `frctl dump --format json` next to `perf script`.  Both recorders run AT
# THE SAME TIME over the same WINDOW seconds (60) of a busy machine
# (perf bench sched messaging loop + stress-ng --cpu 1 --get 1):
#   flightrecd  the shipped default configuration (49 Hz stacks named as
#               recorded, thresholds, metrics), private store
#   perf        perf record -a -g -F 49 (stacks at the same rate)
# Then both stop, and the window is printed: frctl dump --since/--until the
# recording's start and end (what --last 60s selected at its end; fixed
# times so every run prints the same records) --format json, and perf
# script -i perf.data (its default output: stacks symbolized at print
# time).  Cold: after sync + drop_caches, once each.  Warm: REPS runs each,
# alternating; medians and spreads.  Output goes to /dev/null; lines are
# counted in a separate run.  The machine is shared, so each warm run is
# repeated under perf stat for its CPU time (task-clock, all threads).
# BASE=OTHER_BUILD_DIR also times that build's frctl on the same window,
# interleaved (a before/after on one recording), and says whether its
# output is the same bytes.
# Target (issue 9): <= 0.2x perf script's wall time.
#   tests/bench/dump-window.sh BUILD_DIR [REPS] [WINDOW_S]   QUICK=1: 2 reps, 10 s
BUILD=${1:-build}
REPS=${2:-5}
WINDOW=${3:-60}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
[ "$QUICK" = 1 ] && REPS=2 WINDOW=10
CONF="$BUILD/../conf/flightrec.conf"
FRCTL=("$BUILD/ctl/frctl" --config "$CONF" --store "$T/store" --socket "$T/control.sock")

start_flightrecd "$CONF"
FRPID=$TOOL
start_perf -a -g -F 49 -o "$T/perf.data"
busy_for "$WINDOW"
t0=$BUSY_T0 t1=$BUSY_T1
stop_tool # perf
TOOL=$FRPID
stop_tool # flightrecd: its store is final
W=(--since "$(date -u -d @"$t0" +%Y-%m-%dT%H:%M:%SZ)" --until "$(date -u -d @"$t1" +%Y-%m-%dT%H:%M:%SZ)")
ours() { "${FRCTL[@]}" dump "${W[@]}" --format json; }
peer() { perf script -i "$T/perf.data" 2>/dev/null; }
base() { "$BASE/ctl/frctl" "${FRCTL[@]:1}" dump "${W[@]}" --format json; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# cpu_secs COMMAND...: CPU seconds (user + system, all threads) of one run
cpu_secs() {
	perf stat -x, -e task-clock -o "$T/stat" "$@" >/dev/null 2>&1
	awk -F, '/task-clock/ { printf "%.6f", $1 / 1000 }' "$T/stat"
}

lines_ours=$(ours | wc -l)
lines_peer=$(peer | wc -l)
samples_ours=$(ours | grep -c '"type": *"sample"' || true)
samples_peer=$(perf report -i "$T/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
drop_caches; cold_ours=$(secs ours)
drop_caches; cold_peer=$(secs peer)
declare -A warm cpu
for i in $(seq "$REPS"); do
	warm[ours]+="$(secs ours) "
	warm[peer]+="$(secs peer) "
	[ -z "${BASE:-}" ] || warm[base]+="$(secs base) "
	cpu[ours]+="$(cpu_secs "${FRCTL[@]}" dump "${W[@]}" --format json) "
	cpu[peer]+="$(cpu_secs perf script -i "$T/perf.data") "
	[ -z "${BASE:-}" ] || cpu[base]+="$(cpu_secs "$BASE/ctl/frctl" "${FRCTL[@]:1}" dump "${W[@]}" --format json) "
done

machine
echo "window: ${WINDOW}s of a busy machine recorded by both at once; frctl dump --format json: $lines_ours lines ($samples_ours samples); perf script: $lines_peer lines ($samples_peer samples); $(du -sh "$T/store" | cut -f1) store, $(du -h "$T/perf.data" | cut -f1) perf.data"
printf '%-26s %10s %10s %20s %10s\n' "" "cold s" "warm s" "warm spread" "warm CPU s"
printf '%-26s %10s %10s %20s %10s\n' "frctl dump --format json" "$cold_ours" "$(med "${warm[ours]}")" "$(spr "${warm[ours]}")" \
	"$(med "${cpu[ours]}")"
printf '%-26s %10s %10s %20s %10s\n' "perf script" "$cold_peer" "$(med "${warm[peer]}")" "$(spr "${warm[peer]}")" \
	"$(med "${cpu[peer]}")"
if [ -n "${BASE:-}" ]; then
	same=different; cmp -s <(ours) <(base) && same=same
	printf '%-26s %10s %10s %20s %10s\n' "BASE's frctl dump" "" "$(med "${warm[base]}")" "$(spr "${warm[base]}")" \
		"$(med "${cpu[base]}")"
	echo "BASE ($BASE): $same output; warm $(calc "$(med "${warm[base]}") / $(med "${warm[peer]}")")x perf script's time"
fi
echo "warm CPU: frctl dump is $(calc "$(med "${cpu[ours]}") / $(med "${cpu[peer]}")")x perf script's CPU time"
for c in cold warm; do
	if [ $c = cold ]; then o=$cold_ours p=$cold_peer; else o=$(med "${warm[ours]}") p=$(med "${warm[peer]}"); fi
	ratio=$(calc "$o / $p"); met=$(le "$ratio" 0.2)
	echo "$c cache: frctl dump is ${ratio}x perf script's time (target <= 0.2: $met)"
	result "dump of a ${WINDOW}s window as JSON, $c cache" "s" "$o" "$p" "perf script (perf record -a -g -F 49, same window)" \
		"$ratio" "<= 0.2" "$met" "$(jq -cn --argjson lo "$lines_ours" --argjson lp "$lines_peer" --argjson so "$samples_ours" \
		--argjson sp "${samples_peer:-0}" --arg ro "${warm[ours]}" --arg rp "${warm[peer]}" \
		--arg co "${cpu[ours]}" --arg cp "${cpu[peer]}" \
		'{lines_ours: $lo, lines_peer: $lp, samples_ours: $so, samples_peer: $sp, warm_runs_ours: $ro, warm_runs_peer: $rp,
		  warm_cpu_ours: $co, warm_cpu_peer: $cp, recorded: "at the same time"}')"
done
