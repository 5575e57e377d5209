#!/bin/bash
# Benchmark (not a test): what naming a stack's frames costs in reads of
# /proc/PID/maps, and the parser helper's CPU, on a compile loop (gcc -O2
# of a small file, back to back: every compiler process is new, and its
# first sampled stack has its maps read).  The shipped configuration,
# under BUILD and under BASE_BUILD (an older build) alternately, ROUNDS
# times, SECONDS of loop each.  Per run: compiles done, the stacks
# unwound, the maps reads of the unwinder and of the symbolizer, those
# the symbolizer took from the unwinder (symbols.maps_taken, absent
# before 2026-12-06), user frames named and unknown, and the CPU seconds
# of the daemon and of its parser helper (schedstat).
#   tests/bench/maps-reads.sh BUILD_DIR [BASE_BUILD_DIR] [ROUNDS] [SECONDS]
BUILD=${1:-build}
BASE=${2:-}
ROUNDS=${3:-3}
SECS=${4:-40}
. "$(dirname "$0")/lib.sh"
[ "$QUICK" = 1 ] && ROUNDS=1 SECS=10
CONF="$BUILD/../conf/flightrec.conf"
MAIN=$BUILD
echo "maps-reads: $(machine)${BASE:+, base $BASE}"
printf 'int main(void) { return 0; }\n' >"$T/c.c"

# run LABEL: one run of the daemon of $BUILD on a fresh store
run() {
	local n=0 end ppid pcpu s
	start_flightrecd "$CONF"
	sleep 2
	end=$((SECONDS + SECS))
	while [ "$SECONDS" -lt "$end" ]; do
		gcc -O2 -o "$T/c" "$T/c.c"
		n=$((n + 1))
	done
	sleep 2
	s=$(frstatus)
	ppid=$(jq '.sampler.parser.pid' <<<"$s")
	pcpu=$(cat /proc/"$ppid"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.2f", s / 1e9 }')
	echo "$1 compiles=$n cpu_s=$(cpu_of "$TOOL" | xargs printf '%.2f') parser_cpu_s=$pcpu $(jq -c '.sampler |
		{stacks: .unwind.stacks, unwind_maps_read: .unwind.maps_read, symbols_maps_read: .symbols.maps_read,
		 symbols_maps_taken: (.symbols.maps_taken // 0), named: .symbols.user_named,
		 unknown: .symbols.user_unknown}' <<<"$s")"
	stop_tool
}

for r in $(seq "$ROUNDS"); do
	if [ -n "$BASE" ]; then
		BUILD=$BASE
		run "round $r base:"
		BUILD=$MAIN
	fi
	run "round $r this:"
done
