#!/bin/bash
# Benchmark (not a test): what the syscall source adds to a quiet syscall
# (nothing over the threshold), ns per getppid() over 5 M calls, next to
# bpftrace counting raw_syscalls enter and exit (the cheapest thing a
# person would run instead).  Alternating runs of: nothing, flightrecd with
# the default config and the syscall source switched on (it is off by
# default), bpftrace, and for reference flightrecd with the plain default
# config (default-off); medians, spreads, and the ratio of the added costs
# (syscall source on).  Target: flightrecd adds at most half of what
# bpftrace adds.
#   tests/bench/syscall-overhead.sh BUILD_DIR [REPS]
BUILD=${1:-build}
REPS=${2:-5}
. "$(dirname "$0")/lib.sh"
LOOP="$BUILD/tests/bench/getppid-loop"
need_pkg bpftrace bpftrace
need_tracefs
: >"$T/default.conf" # the built-in defaults (the shipped config's values)
echo 'sources = { syscall = { enabled = true; }; };' >"$T/syscall.conf"

declare -A ns
modes="none flightrecd bpftrace default-off"
for i in $(seq "$REPS"); do
	for m in $modes; do
		case $m in
		flightrecd) start_flightrecd "$T/syscall.conf" ;;
		default-off) start_flightrecd "$T/default.conf" ;;
		bpftrace)
			bpftrace -e 'tracepoint:raw_syscalls:sys_enter, tracepoint:raw_syscalls:sys_exit { @[probe] = count(); }' \
				>"$T/bpftrace.out" 2>&1 &
			TOOL=$!
			for _ in $(seq 100); do grep -q '^Attaching' "$T/bpftrace.out" && break; sleep 0.1; done
			sleep 0.5 ;; # attached after the banner
		esac
		ns[$m]+="$("$LOOP" 5000000) "
		stop_tool
	done
done
machine
echo "getppid(), ns per call, $REPS alternating runs of 5 M calls each"
b=$(tr ' ' '\n' <<<"${ns[none]}" | grep . | median)
for m in $modes; do
	v=$(tr ' ' '\n' <<<"${ns[$m]}" | grep . | median)
	printf '%-11s median %7.1f  spread %-15s added %6.1f ns\n' "$m" "$v" "$(tr ' ' '\n' <<<"${ns[$m]}" | grep . | spread)" \
		"$(awk -v v="$v" -v b="$b" 'BEGIN { print v - b }')"
done
f=$(tr ' ' '\n' <<<"${ns[flightrecd]}" | grep . | median)
p=$(tr ' ' '\n' <<<"${ns[bpftrace]}" | grep . | median)
ratio=$(awk -v f="$f" -v p="$p" -v b="$b" 'BEGIN { printf "%.3f", (f - b) / (p - b) }')
met=$(awk -v r="$ratio" 'BEGIN { print (r <= 0.5) ? "true" : "false" }')
echo "flightrecd's added cost is ${ratio}x bpftrace's (target <= 0.5: $met)"
result "quiet syscall probe cost" "ns added per syscall" "$(awk -v f="$f" -v b="$b" 'BEGIN { print f - b }')" \
	"$(awk -v p="$p" -v b="$b" 'BEGIN { print p - b }')" "bpftrace raw_syscalls count()" "$ratio" "<= 0.5" "$met" \
	"{\"baseline_ns\": $b, \"default_off_added_ns\": $(awk -v d="$(tr ' ' '\n' <<<"${ns[default-off]}" | grep . | median)" -v b="$b" 'BEGIN { print d - b }')}"
