#!/bin/bash
# Benchmark (not a test): the throughput an always-on recorder takes from
# busy workloads.  Alternately, REPS times, each workload runs under
#   none        nothing recording
#   flightrecd  the shipped default configuration (conf/flightrec.conf:
#               every default source, 49 Hz stacks, metrics), private store
#   perf        perf record -a -g -F 49 (what one would leave running
#               instead: stacks at the same rate, to a file)
#   +syscall    the default configuration with sources.syscall switched on
#               (off by default: it hooks every system call); its loss is
#               printed and reported without a target, as the price of
#               opting in
#   -offstacks  the default configuration with sources.sched.offcpu_stacks
#               off: flightrecd's loss less this one's is what off-CPU
#               stacks add (target <= 1 %, issue 27)
# Workloads (throughput, higher is better):
#   stress-ng   --cpu 1 --get 1 for DUR seconds (a CPU + syscall mix; one
#               instance each, so the recorder finds a CPU some of the time);
#               bogo-ops per second of wall time, per stressor; the loss is
#               the mean of the two stressors' losses
#   messaging   perf bench sched messaging -g GROUPS -l LOOPS (pipes,
#               wakeups, context switches); 1 / its total time
# Loss = 1 - median throughput / median throughput of "none", in %.
# Then, per workload, one more run under the default configuration with
# bpf_stats on: the CPU its BPF programs and the daemon took, as a share of
# the CPU used (printed, and in the JSON as cpu_accounted_pct).
# Target (issue 9): flightrecd's loss <= 1 % absolute and <= 0.5x perf's.
#   tests/bench/sources-overhead.sh BUILD_DIR [REPS]   QUICK=1: 2 reps, short runs
BUILD=${1:-build}
REPS=${2:-5}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
need_pkg bpftool bpftool
if [ "$QUICK" = 1 ]; then REPS=2 DUR=3 GROUPS_=5 LOOPS=300; else DUR=${DUR:-10} GROUPS_=${GROUPS_:-10} LOOPS=${LOOPS:-1000}; fi
SETTLE=${SETTLE:-3}
CONF="$BUILD/../conf/flightrec.conf"
# the same with the syscall source on (the first 'enabled' after "syscall = {")
sed '/^  syscall = {/,/};/ s/enabled = false;/enabled = true;/' "$CONF" >"$T/syscall-on.conf"
grep -A1 '^  syscall = {' "$T/syscall-on.conf" | grep -q 'enabled = true;' || {
	echo "could not switch the syscall source on in a copy of $CONF" >&2
	exit 1
}
sed 's/offcpu_stacks = true;/offcpu_stacks = false;/' "$CONF" >"$T/offstacks.conf"
grep -q 'offcpu_stacks = false;' "$T/offstacks.conf" || {
	echo "could not switch off-CPU stacks off in a copy of $CONF" >&2
	exit 1
}

# stressng: "CPU_OPS_PER_S GET_OPS_PER_S"
stressng() {
	stress-ng --cpu 1 --get 1 -t "$DUR" --metrics-brief --yaml "$T/sn.yaml" >/dev/null 2>&1
	awk '/stressor:/ { s = $3 } /bogo-ops-per-second-real-time:/ { r[s] = $2 } END { print r["cpu"], r["get"] }' "$T/sn.yaml"
}
messaging() {
	perf bench sched messaging -g "$GROUPS_" -l "$LOOPS" 2>/dev/null | awk '/Total time/ { printf "%.6f\n", 1 / $3 }'
}

declare -A cpu get msg
modes="none flightrecd perf +syscall -offstacks"
for i in $(seq "$REPS"); do
	for m in $modes; do
		case $m in
		flightrecd) start_flightrecd "$CONF" ;;
		+syscall) start_flightrecd "$T/syscall-on.conf" ;;
		-offstacks) start_flightrecd "$T/offstacks.conf" ;;
		perf) start_perf -a -g -F 49 -o "$T/perf.data" ;;
		esac
		# each workload starts on a settled machine: the 400 tasks of the
		# previous messaging run took several seconds of the next
		# stress-ng run with them (run to run spread of 8 % without this)
		sleep "$SETTLE"
		read -r c g < <(stressng)
		cpu[$m]+="$c "; get[$m]+="$g "
		sleep "$SETTLE"
		msg[$m]+="$(messaging) "
		stop_tool
		rm -f "$T/perf.data"
	done
done

# CPU accounting, a separate run per workload (bpf_stats on): what the
# default configuration's BPF programs (their run time; the tracepoint
# dispatch around them is not in it) and the daemon took, as a share of
# all the CPU time the workload and the daemon used.  Throughput runs on
# this VM vary by 5-10 % from run to run, more than a 1 % target; this is
# the same cost, counted instead of inferred.
bpf_sum() { bpf_prog_times "$1" | awk '{ s += $3 } END { printf "%d", s }'; }
declare -A acct acct_detail
bpf_stats_on
for w in stress-ng messaging; do
	start_flightrecd "$CONF"
	sleep "$SETTLE"
	b0=$(bpf_sum "$TOOL") d0=$(cpu_of "$TOOL")
	if [ "$w" = stress-ng ]; then
		/usr/bin/time -f '%U %S' -o "$T/time" stress-ng --cpu 1 --get 1 -t "$DUR" >/dev/null 2>&1
	else
		/usr/bin/time -f '%U %S' -o "$T/time" perf bench sched messaging -g "$GROUPS_" -l "$LOOPS" >/dev/null 2>&1
	fi
	b1=$(bpf_sum "$TOOL") d1=$(cpu_of "$TOOL")
	stop_tool
	read -r u sy <"$T/time"
	acct[$w]=$(calc "100 * (($b1 - $b0) / 1e9 + $d1 - $d0) / ($u + $sy + $d1 - $d0)")
	acct_detail[$w]="BPF $(calc "($b1 - $b0) / 1e6") ms, daemon $(calc "1000 * ($d1 - $d0)") ms, workload $(calc "1000 * ($u + $sy)") ms"
done
bpf_stats_off

machine
echo "default always-on configuration; $REPS alternating runs per mode; stress-ng --cpu 1 --get 1 -t $DUR, perf bench sched messaging -g $GROUPS_ -l $LOOPS"
# loss A_LIST BASE_LIST: % throughput lost, medians
loss() { calc "100 * (1 - $(med "$1") / $(med "$2"))"; }
declare -A sn_loss msg_loss
printf '%-11s %12s %12s %14s %12s %10s\n' mode "cpu ops/s" "get ops/s" "stress-ng loss" "messaging/s" "msg loss"
for m in $modes; do
	sn_loss[$m]=$(calc "($(loss "${cpu[$m]}" "${cpu[none]}") + $(loss "${get[$m]}" "${get[none]}")) / 2")
	msg_loss[$m]=$(loss "${msg[$m]}" "${msg[none]}")
	printf '%-11s %12s %12s %13s%% %12s %9s%%\n' "$m" "$(med "${cpu[$m]}")" "$(med "${get[$m]}")" "${sn_loss[$m]}" \
		"$(med "${msg[$m]}")" "${msg_loss[$m]}"
	printf '%-11s   runs: cpu %s| get %s| messaging %s\n' "" "${cpu[$m]}" "${get[$m]}" "${msg[$m]}"
done
for w in stress-ng messaging; do
	if [ "$w" = stress-ng ]; then f=${sn_loss[flightrecd]} p=${sn_loss[perf]}; else f=${msg_loss[flightrecd]} p=${msg_loss[perf]}; fi
	ratio=$(calc "$p > 0 ? $f / $p : 0"); [ "$(calc "$p > 0")" = 1 ] || ratio=null
	# met: at most 1 % absolute, and at most half of perf's loss (a loss
	# within the noise, <= 0, meets the second part whatever perf's)
	met=$(awk -v f="$f" -v p="$p" 'BEGIN { print (f <= 1 && (f <= 0 || f <= 0.5 * p)) ? "true" : "false" }')
	echo "$w: flightrecd loses ${f} %, perf ${p} % (ratio ${ratio}; target <= 1 % and <= 0.5x perf: $met)"
	echo "$w: CPU accounted to flightrecd (bpf_stats run): ${acct[$w]} % of the CPU used (${acct_detail[$w]})"
	if [ "$w" = stress-ng ]; then
		runs=$(jq -cn --arg c "$(for m in $modes; do echo "$m: ${cpu[$m]}"; done)" --arg g "$(for m in $modes; do echo "$m: ${get[$m]}"; done)" \
			--argjson a "${acct[$w]}" --arg ad "${acct_detail[$w]}" \
			'{runs_cpu_ops_s: $c, runs_get_ops_s: $g, cpu_accounted_pct: $a, cpu_accounted: $ad}')
		name="always-on default config: stress-ng --cpu 1 --get 1 throughput loss"
	else
		runs=$(jq -cn --arg r "$(for m in $modes; do echo "$m: ${msg[$m]}"; done)" \
			--argjson a "${acct[$w]}" --arg ad "${acct_detail[$w]}" \
			'{runs_per_s: $r, cpu_accounted_pct: $a, cpu_accounted: $ad}')
		name="always-on default config: perf bench sched messaging throughput loss"
	fi
	result "$name" "% throughput lost" "$f" "$p" "perf record -a -g -F 49" "$ratio" "<= 1 % and <= 0.5x perf" "$met" "$runs"
done
# the price of the opt-in syscall source, no target; the peer column is
# the default configuration's loss
s=${sn_loss[+syscall]} m=${msg_loss[+syscall]}
echo "with sources.syscall on: stress-ng loses ${s} %, messaging ${m} %"
result "default config + sources.syscall on: stress-ng --cpu 1 --get 1 throughput loss" "% throughput lost" "$s" \
	"${sn_loss[flightrecd]}" "the default config (syscall off)" null "-" null
result "default config + sources.syscall on: perf bench sched messaging throughput loss" "% throughput lost" "$m" \
	"${msg_loss[flightrecd]}" "the default config (syscall off)" null "-" null
# what off-CPU stacks add to the default configuration's loss, same runs
for w in stress-ng messaging; do
	if [ "$w" = stress-ng ]; then on=${sn_loss[flightrecd]} off=${sn_loss[-offstacks]}; else on=${msg_loss[flightrecd]} off=${msg_loss[-offstacks]}; fi
	added=$(calc "$on - $off")
	echo "$w: off-CPU stacks add ${added} % (loss ${on} % with them, ${off} % without)"
	result "off-CPU stacks on vs off (default config): $w added throughput loss" "% throughput lost" "$added" "$off" \
		"the default config with sources.sched.offcpu_stacks = false" null "<= 1 %" "$(le "$added" 1)"
done
