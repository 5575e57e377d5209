#!/bin/bash
# Benchmark (not a test): what an off-CPU stack costs, per record.  The
# shipped default configuration with the off-CPU threshold lowered to 1 ms
# so that every wait of the workload is recorded, with
# sources.sched.offcpu_stacks off and on alternately, REPS times each:
#   waits THREADS N 2   THREADS threads each sleep 2 ms N times
# and, per run, with bpf_stats on:
#   switch side  the sched_switch program's run time (all switches of the
#                machine), whose difference on - off over the waits recorded
#                is what taking the kernel stack and arming the task work
#                adds per record
#   task side    the workload's own CPU time (user + system, getrusage):
#                the task work runs in the waiting thread as it returns to
#                user space (copying up to 16 KiB of its stack, writing the
#                record), so on - off over the waits is its cost
# The sum is the BPF cost per stacked record; medians over the runs.
#   tests/bench/offcpu-stacks.sh BUILD_DIR [REPS]    QUICK=1: 2 reps
BUILD=${1:-build}
REPS=${2:-5}
. "$(dirname "$0")/lib.sh"
need_pkg bpftool bpftool
if [ "$QUICK" = 1 ]; then REPS=2 N=200; else N=${N:-1000}; fi
THREADS=${THREADS:-8}
CONF="$BUILD/../conf/flightrec.conf"
for s in true false; do
	sed -e 's/offcpu_threshold = "1s";/offcpu_threshold = "1ms";/' -e "s/offcpu_stacks = true;/offcpu_stacks = $s;/" \
		"$CONF" >"$T/stacks-$s.conf"
	grep -q 'offcpu_threshold = "1ms";' "$T/stacks-$s.conf" && grep -q "offcpu_stacks = $s;" "$T/stacks-$s.conf" || {
		echo "could not set the off-CPU threshold and stacks in a copy of $CONF" >&2
		exit 1
	}
done

switch_ns() { bpf_prog_times "$TOOL" | awk '$1 == "fr_switch" { print $3 }'; }
declare -A sw cpu waits recs copied
bpf_stats_on
for i in $(seq "$REPS"); do
	for s in false true; do
		start_flightrecd "$T/stacks-$s.conf"
		sleep 1
		r0=$(frstatus | jq '.sources.sched.records') b0=$(switch_ns)
		read -r w c < <("$BUILD/tests/bench/waits" "$THREADS" "$N" 2)
		b1=$(switch_ns)
		sleep 0.5
		st=$(frstatus)
		stop_tool
		r1=$(jq '.sources.sched.records' <<<"$st")
		sw[$s]+="$((b1 - b0)) " cpu[$s]+="$c " waits[$s]+="$w " recs[$s]+="$((r1 - r0)) "
		[ "$s" = true ] && copied[$s]+="$(jq '.offcpu_stacks.user_copied' <<<"$st") "
	done
done
bpf_stats_off

machine
W=$(med "${waits[true]}")
switch_side=$(calc "($(med "${sw[true]}") - $(med "${sw[false]}")) / $W")
task_side=$(calc "($(med "${cpu[true]}") - $(med "${cpu[false]}")) / $W")
total=$(calc "$switch_side + $task_side")
echo "off-CPU stacks: $THREADS threads x $N waits of 2 ms, threshold 1 ms, default config otherwise; $REPS runs each"
for s in false true; do
	echo "offcpu_stacks=$s: fr_switch ns $(med "${sw[$s]}") ($(spr "${sw[$s]}")), workload CPU ns $(med "${cpu[$s]}") ($(spr "${cpu[$s]}")), sched records $(med "${recs[$s]}")"
done
echo "user stacks copied per run (on): ${copied[true]}"
echo "per stacked record: switch side $switch_side ns, task side $task_side ns, total $total ns"
result "BPF cost per off-CPU stack" "ns per stacked record" "$total" null "-" null "print it" null \
	"$(jq -cn --argjson s "$switch_side" --argjson t "$task_side" --arg sw_off "${sw[false]}" --arg sw_on "${sw[true]}" \
		--arg cpu_off "${cpu[false]}" --arg cpu_on "${cpu[true]}" --arg copied "${copied[true]}" --argjson w "$W" \
		'{switch_side_ns: $s, task_side_ns: $t, waits_per_run: $w, runs_switch_ns_off: $sw_off, runs_switch_ns_on: $sw_on,
		  runs_workload_cpu_ns_off: $cpu_off, runs_workload_cpu_ns_on: $cpu_on, user_stacks_copied: $copied}')"
