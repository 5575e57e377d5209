#!/bin/bash
# Benchmark (not a test): where the syscall source's cost above the floor
# goes.  Alternating runs of getppid() with nothing attached, then with each
# variant of tests/bench/syscall-variants.bpf.c (a raw_tp sys_enter +
# sys_exit pair doing one piece of the source's work); ns per call, medians
# and spreads, and what each adds over `none` and over `empty` (the floor).
# With BPF_STATS=1, bpf_stats is on for the whole run and each variant's
# programs' run_time_ns / run_cnt is printed too (the stats add their own
# clock reads to every call, so the loop times of such a run are not the
# ones to quote).
#   tests/bench/syscall-split.sh BUILD_DIR [REPS [CALLS [VARIANT...]]]
BUILD=${1:-build}
REPS=${2:-5}
CALLS=${3:-3000000}
shift $(($# < 3 ? $# : 3))
. "$(dirname "$0")/lib.sh"
LOOP="$BUILD/tests/bench/getppid-loop"
VARIANT="$BUILD/tests/bench/syscall-variant"
OBJ="$BUILD/tests/bench/syscall-variants.bpf.o"
modes="none empty ${*:-self bitmap task pcpu stor jiffies mono boot storjiffies storboot old}"
[ "${BPF_STATS:-0}" = 1 ] && bpf_stats_on

declare -A ns prog
for i in $(seq "$REPS"); do
	for m in $modes; do
		if [ "$m" != none ]; then
			"$VARIANT" "$OBJ" "$m" >"$T/v.out" 2>&1 &
			TOOL=$!
			for _ in $(seq 100); do grep -q '^attached' "$T/v.out" && break; sleep 0.05; done
			grep -q '^attached' "$T/v.out" || { echo "variant $m did not attach: $(cat "$T/v.out")" >&2; exit 1; }
		fi
		ns[$m]+="$("$LOOP" "$CALLS") "
		if [ "${BPF_STATS:-0}" = 1 ] && [ "$m" != none ]; then
			prog[$m]+="$(bpf_prog_times "$TOOL" | awk '$2 > 0 { printf "%.1f+", $3 / $2 }' | sed 's/+$//') "
		fi
		stop_tool
	done
done
machine
echo "getppid(), ns per call, $REPS alternating runs of $CALLS calls each"
b=$(med "${ns[none]}")
f=$(med "${ns[empty]}")
for m in $modes; do
	v=$(med "${ns[$m]}")
	printf '%-12s median %7.1f  spread %-13s added %6.1f  over the floor %6.1f' "$m" "$v" "$(spr "${ns[$m]}")" \
		"$(calc "$v - $b")" "$(calc "$v - $f")"
	[ -n "${prog[$m]:-}" ] && printf '  bpf_stats ns/run (enter+exit): %s' "${prog[$m]}"
	echo
done
