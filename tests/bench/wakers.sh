#!/bin/bash
# What the wakers cost (issue 46): perf bench sched messaging, which is
# little but wakeups (20 groups of 20 senders and 20 receivers over
# pipes: each message wakes a reader), under
#   none   nothing recording
#   on     the shipped configuration (conf/flightrec.conf: wakers on)
#   off    the same with sources.sched.wakers = false
# alternated in rounds (none on off, again and again) so drift hits all
# alike; each cell one run of the messaging benchmark, its time.  Then,
# not alternated, the wakeup program's own cost under the same load with
# bpf_stats: runs, ns per run, and how many made a waker record.
# Target: on within 1 % of off (the paired median over rounds of
# time_on / time_off - 1); servers.sh MODES="none flightrecd -wakers"
# measures the same on nginx, PostgreSQL and redis.
#   tests/bench/wakers.sh BUILD_DIR [REPS]     QUICK=1: 3 rounds
BUILD=${1:-build}
REPS=${2:-15}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
[ "$QUICK" = 1 ] && REPS=3
GROUPS_=${GROUPS_:-20}
LOOPS=${LOOPS:-2000}

cp "$SRC/conf/flightrec.conf" "$T/on.conf"
sed 's/^    wakers = true;/    wakers = false;/' "$T/on.conf" >"$T/off.conf"
grep -q '^    wakers = false;' "$T/off.conf" || { echo "could not switch wakers off in the shipped configuration" >&2; exit 1; }
"$BUILD/daemon/flightrecd" --check-config --config "$T/on.conf" >/dev/null ||
	{ echo "$BUILD's flightrecd does not accept $SRC/conf/flightrec.conf: build the same tree" >&2; exit 1; }

# messaging: the benchmark's time, s
messaging() {
	perf bench sched messaging -g "$GROUPS_" -l "$LOOPS" 2>/dev/null | awk '/Total time/ { print $3 }'
}

declare -A t
messaging >/dev/null # warm
for i in $(seq "$REPS"); do
	for m in none on off; do
		[ "$m" = none ] || start_flightrecd "$T/$m.conf"
		sleep 1
		t[$m]+="$(messaging) "
		stop_tool
	done
	echo "round $i/$REPS: none ${t[none]##* } on ${t[on]##* } off ${t[off]##* }" >&2
done

# the program's cost, and what it recorded, under one daemon
bpf_stats_on
start_flightrecd "$T/on.conf"
sleep 1
before=$(bpf_prog_times "$TOOL" | awk '$1 == "fr_waking" { print $2, $3 }')
messaging >/dev/null
after=$(bpf_prog_times "$TOOL" | awk '$1 == "fr_waking" { print $2, $3 }')
wk=$(frstatus | jq -c '.wakers')
stop_tool
bpf_stats_off
read -r c0 n0 <<<"$before"
read -r c1 n1 <<<"$after"
runs=$((c1 - c0))
ns_per=$(calc "($n1 - $n0) / ($runs > 0 ? $runs : 1)")

# paired A B: median over rounds of 100 * (a_i / b_i - 1)
paired() { paste <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) | awk '{ print 100 * ($1 / $2 - 1) }' | median; }
machine
echo "perf bench sched messaging -g $GROUPS_ -l $LOOPS; $REPS rounds of none on off"
for m in none on off; do
	printf '  %-5s median %8s s  spread %-18s runs: %s\n' "$m" "$(med "${t[$m]}")" "$(spr "${t[$m]}")" "${t[$m]}"
done
on_off=$(paired "${t[on]}" "${t[off]}")
on_none=$(paired "${t[on]}" "${t[none]}")
off_none=$(paired "${t[off]}" "${t[none]}")
echo "  time added (paired medians): on vs off $on_off %, on vs none $on_none %, off vs none $off_none %"
echo "  fr_waking: $runs runs in one messaging run, $ns_per ns a run (bpf_stats); wakers: $wk"
result "wakers: perf bench sched messaging, sources.sched.wakers on vs off: time added" "% time added" "$on_off" null \
	"the shipped config with wakers off" null "<= 1 %" "$(le "$on_off" 1)" \
	"$(jq -cn --arg on "${t[on]}" --arg off "${t[off]}" --arg none "${t[none]}" --argjson on_none "$on_none" \
		--argjson off_none "$off_none" --argjson runs "$runs" --argjson ns "$ns_per" --argjson wk "$wk" \
		'{runs_on: $on, runs_off: $off, runs_none: $none, on_vs_none_pct: $on_none, off_vs_none_pct: $off_none,
		  waking_runs: $runs, waking_ns_per_run: $ns, wakers: $wk}')"
