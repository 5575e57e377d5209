#!/bin/bash
# Benchmark (not a test): what the comparison with a baseline (issue 45,
# "What changed") costs frctl report.  flightrecd with the shipped default
# configuration records 2 x WINDOW_S (1200) seconds of the busy workload
# (perf bench sched messaging loop + stress-ng, as report-html.sh); then
# `frctl report` (text) of its last 60 s and of its last WINDOW_S, each
# with its default baseline (the same length just before it) and with
# --no-baseline, alternately, REPS times; medians and min..max.  The
# baseline reads as many records again as the window, so the target is
# at most 2.2x the time without it.
#   tests/bench/report-baseline.sh BUILD_DIR [REPS] [WINDOW_S]   QUICK=1: 1 rep, 2 x 70 s
BUILD=${1:-build}
REPS=${2:-5}
WINDOW=${3:-600}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
[ "$QUICK" = 1 ] && REPS=1 WINDOW=70
CONF="$BUILD/../conf/flightrec.conf"
FRCTL=("$BUILD/ctl/frctl" --config "$CONF" --store "$T/store" --socket "$T/control.sock")

start_flightrecd "$CONF"
busy_for $((2 * WINDOW))
t1=$BUSY_T1
stop_tool # flightrecd: its store is final

iso() { date -u -d @"$1" +%Y-%m-%dT%H:%M:%SZ; }
machine
for span in 60 "$WINDOW"; do
	W=(--since "$(iso $((t1 - span)))" --until "$(iso "$t1")")
	records=$("${FRCTL[@]}" report "${W[@]}" --format json | jq .window.records)
	base_records=$("${FRCTL[@]}" report "${W[@]}" --format json | jq .baseline.records)
	changes=$("${FRCTL[@]}" report "${W[@]}" --format json | jq '.changes | length')
	with= without=
	for _ in $(seq "$REPS"); do
		without+="$(secs "${FRCTL[@]}" report "${W[@]}" --no-baseline) "
		with+="$(secs "${FRCTL[@]}" report "${W[@]}") "
	done
	mw=$(med "$with") mo=$(med "$without")
	ratio=$(calc "$mw / $mo")
	echo "window ${span}s ($records records, baseline $base_records, $changes changes): with the baseline $mw s ($(spr "$with")), without $mo s ($(spr "$without")): ${ratio}x"
	result "report with its baseline, ${span} s busy window" s "$mw" "$mo" "the same report, --no-baseline" "$ratio" \
		"<= 2.2x" "$(le "$ratio" 2.2)" \
		"{\"records\":$records,\"baseline_records\":$base_records,\"changes\":$changes,\"with_s\":\"$with\",\"without_s\":\"$without\"}"
done
