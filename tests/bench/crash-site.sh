#!/bin/bash
# Benchmark (not a test): what the crash site (issue 43) costs.
#  1. BPF time per fatal signal: NSEGV children that each dereference
#     NULL (fr-segv), under the shipped configuration with bpf_stats on;
#     fr_signal_generate's run time over its runs (every signal generated
#     runs it: the children's SIGSEGV and their parent's SIGCHLD, which is
#     filtered out at its first comparison) and over the fatal signals
#     recorded with a stack.  A storm: the per-CPU budget of 32 stacks a
#     second skips the rest, counted (signal_stacks.over_budget).
#  2. The mapping tracker on an exec storm: fr-exec-storm NEXEC (each exec
#     maps its binary, ld.so and libc) under BUILD and under BASE_BUILD (a
#     build from before the tracker), alternately, REPS times: the storm's
#     wall time and the daemon's CPU seconds (with its parser helper).
#   tests/bench/crash-site.sh BUILD_DIR [BASE_BUILD_DIR] [REPS]
BUILD=${1:-build}
BASE=${2:-}
REPS=${3:-3}
. "$(dirname "$0")/lib.sh"
need_pkg bpftool bpftool
CONF="$BUILD/../conf/flightrec.conf"
NSEGV=${NSEGV:-2000}
NEXEC=${NEXEC:-20000}
[ "$QUICK" = 1 ] && NSEGV=200 NEXEC=2000 REPS=1
SEGV="$BUILD/tests/helpers/fr-segv"
STORM="$BUILD/tests/helpers/fr-exec-storm"
echo "crash-site: $(machine)"

# --- 1. BPF time per fatal signal
# sig_times: "runs ns" of fr_signal_generate so far
sig_times() { bpf_prog_times "$TOOL" | awk '$1 == "fr_signal_gener" || $1 == "fr_signal_generate" { print $2, $3 }'; }
# crashes N PAUSE: N runs of fr-segv, PAUSE seconds apart (bash's
# "Segmentation fault" lines discarded)
crashes() { { for _ in $(seq "$1"); do "$SEGV" >/dev/null 2>&1 || true; sleep "$2"; done; } 2>/dev/null; }
start_flightrecd "$CONF"
bpf_stats_on
# (a) paced under the budget (32 a second per CPU): every one with its stacks
read -r c0 t0 < <(sig_times)
s0=$(frstatus | jq '.signal_stacks.taken')
crashes $((NSEGV / 10)) 0.05
sleep 1
read -r c1 t1 < <(sig_times)
taken=$(( $(frstatus | jq '.signal_stacks.taken') - s0 ))
# each crash also runs the program once for the parent's SIGCHLD, which
# it drops at its first test: counted as runs, not as fatal signals
per_stack=$(calc "($t1 - $t0) / $taken")
echo "  paced: $taken fatal signals with stacks, fr_signal_generate $((c1 - c0)) runs, $(calc "($t1 - $t0) / ($c1 - $c0)") ns a run: $per_stack ns of BPF per fatal signal with its stacks"
# (b) a storm: the budget skips stacks, never the record
read -r c0 t0 < <(sig_times)
st=$(frstatus)
s0=$(jq '.signal_stacks.taken + .signal_stacks.over_budget' <<<"$st")
o0=$(jq '.signal_stacks.over_budget' <<<"$st")
start=$(now)
crashes "$NSEGV" 0
wall=$(calc "$(now) - $start")
sleep 1
read -r c1 t1 < <(sig_times)
st=$(frstatus)
recorded=$(( $(jq '.signal_stacks.taken + .signal_stacks.over_budget' <<<"$st") - s0 ))
over=$(( $(jq '.signal_stacks.over_budget' <<<"$st") - o0 ))
per_fatal=$(calc "($t1 - $t0) / $recorded")
echo "  storm: $NSEGV crashes in ${wall}s: $recorded signal records ($over over the budget, without stacks), $per_fatal ns of BPF per fatal signal"
echo "  parser: $(jq -c '.sampler.parser | {stacks, over_budget, wait_us_max}' <<<"$st"); mappings: $(jq -c '.sampler.mappings | {mmaps, served, lost, processes, mappings}' <<<"$st")"
result crash-signal-bpf ns "$per_stack" null "" null "(measured)" true \
	"{\"storm_ns_per_signal\": $per_fatal, \"storm_recorded\": $recorded, \"storm_over_budget\": $over, \"storm_crashes\": $NSEGV}"
bpf_stats_off
stop_tool

# --- 2. the exec storm, with and without the tracker
storm() { # BUILD_DIR: wall seconds, daemon CPU seconds
	local b=$1 c0 c1 t0 t1
	BUILD=$b start_flightrecd "$b/../conf/flightrec.conf"
	sleep 2
	c0=$(cpu_of "$TOOL")
	t0=$(now)
	"$STORM" "$NEXEC"
	t1=$(now)
	sleep 1
	c1=$(cpu_of "$TOOL")
	echo "$(calc "$t1 - $t0") $(calc "$c1 - $c0")"
	stop_tool
}
if [ -n "$BASE" ]; then
	W=() C=() BW=() BC=()
	for _ in $(seq "$REPS"); do
		read -r w c < <(storm "$BASE"); BW+=("$w"); BC+=("$c")
		read -r w c < <(storm "$BUILD"); W+=("$w"); C+=("$c")
	done
	echo "  exec storm of $NEXEC: wall $(med "${W[*]}")s ($(spr "${W[*]}")) vs $(med "${BW[*]}")s ($(spr "${BW[*]}")) before;" \
		"daemon CPU $(med "${C[*]}")s ($(spr "${C[*]}")) vs $(med "${BC[*]}")s ($(spr "${BC[*]}")) before"
	result exec-storm-tracker s "$(med "${C[*]}")" "$(med "${BC[*]}")" "before the tracker" \
		"$(calc "$(med "${C[*]}") / $(med "${BC[*]}")")" "(measured)" true \
		"{\"wall_s\": $(med "${W[*]}"), \"wall_s_before\": $(med "${BW[*]}")}"
fi
