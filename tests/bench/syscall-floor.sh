#!/bin/bash
# Benchmark (not a test): the syscall source against its floor, getppid()
# ns per call, in one run (issue 31 part 2).  Alternating runs of: nothing
# (none); two empty raw_tp programs on sys_enter/sys_exit (floor,
# raw-tp-floor); flightrecd with the shipped config (shipped); the same
# with sources.syscall on (syscall); and, when OLD_BUILD names the build
# of an older tree, its flightrecd with sources.syscall on (old).  The
# source adds (syscall - shipped), the floor (floor - none); target: at
# most 1.3x.  Each daemon runs 11 s before the loop: the source measures
# the tick for its first 10 s, stamping every call with the clock
# meanwhile (bpf/syscall.bpf.c).  With BPF_STATS=1, bpf_stats is on and
# the syscall source's programs' ns per run (over the daemon's life) are printed
# (the stats' own clock reads inflate every loop time of such a run).
#   [OLD_BUILD=DIR] tests/bench/syscall-floor.sh BUILD_DIR [REPS [CALLS]]
BUILD=${1:-build}
REPS=${2:-5}
CALLS=${3:-3000000}
. "$(dirname "$0")/lib.sh"
LOOP="$BUILD/tests/bench/getppid-loop"
: >"$T/shipped.conf"
echo 'sources = { syscall = { enabled = true; }; };' >"$T/syscall.conf"
[ "${BPF_STATS:-0}" = 1 ] && bpf_stats_on
modes="none floor shipped syscall${OLD_BUILD:+ old}"

declare -A ns prog
for i in $(seq "$REPS"); do
	for m in $modes; do
		case $m in
		floor)
			"$BUILD/tests/bench/raw-tp-floor" >"$T/floor.out" 2>&1 &
			TOOL=$!
			for _ in $(seq 100); do grep -q '^attached' "$T/floor.out" && break; sleep 0.1; done ;;
		shipped) start_flightrecd "$T/shipped.conf"; sleep 11 ;;
		syscall) start_flightrecd "$T/syscall.conf"; sleep 11 ;;
		old) BUILD=$OLD_BUILD start_flightrecd "$T/syscall.conf"; sleep 11 ;;
		esac
		ns[$m]+="$("$LOOP" "$CALLS") "
		if [ "${BPF_STATS:-0}" = 1 ] && { [ "$m" = syscall ] || [ "$m" = old ]; }; then
			prog[$m]+="$(bpf_prog_times "$TOOL" | awk '$1 ~ /^fr_sys_/ {
				printf "%s %.1f; ", $1, $3 / ($2 ? $2 : 1) }') | "
		fi
		stop_tool
	done
done
machine
echo "getppid(), ns per call, $REPS alternating runs of $CALLS calls each"
for m in $modes; do
	printf '%-8s median %7.1f  spread %s\n' "$m" "$(med "${ns[$m]}")" "$(spr "${ns[$m]}")"
done
floor=$(calc "$(med "${ns[floor]}") - $(med "${ns[none]}")")
for m in syscall${OLD_BUILD:+ old}; do
	add=$(calc "$(med "${ns[$m]}") - $(med "${ns[shipped]}")")
	echo "$m adds $add ns a call over the shipped config; the floor $floor ns: $(calc "$add / $floor")x (target <= 1.3x)"
	[ -n "${prog[$m]:-}" ] && echo "  bpf_stats: ${prog[$m]}"
done
exit 0
