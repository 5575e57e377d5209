#!/bin/bash
# Rare records have room when samples fill the rings: a daemon that stalls
# (here stopped with SIGSTOP: overloaded, swapped out, as good as stopped)
# while every CPU is busy has its rings filled with CPU samples, ~17 KiB
# each.  Samples stop at 7/8 of a ring (FR_BULK_HEADROOM_SHIFT), counted
# as dropped; the last eighth is for every other record.  A process that
# dies of SIGSEGV on each CPU meanwhile keeps its exec and its signal
# record, stack included, and the crash rule fires.  (Before the headroom,
# the signal records were dropped: the rings were full.)
# Usage: test-ring-headroom.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"
HELPERS=$BUILD/tests/helpers

# the shipped rings (1 MiB) and rules, samples 20 times as often as shipped
# so that they fill a ring in a tenth of a second
cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 999; }; };
CONF
start_daemon "$T/fr.conf"
# the CPUs this test may run on (a cpuset need not start at 0)
cpus=()
for r in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' ' '); do
	if [[ $r == *-* ]]; then cpus+=($(seq "${r%-*}" "${r#*-}")); else cpus+=("$r"); fi
done
ncpu=${#cpus[@]}
spin=()
for c in "${cpus[@]}"; do
	taskset -c "$c" "$HELPERS/fr-spin" 20 >/dev/null &
	spin+=($!)
	PIDS="$PIDS $!"
done
sleep 1
# what was dropped before, per source and CPU
counts() { "$FRCTL" --store "$T/store" status --json | jq -c '.sources | map_values(.dropped_per_cpu)'; }
before=$(counts)

# stopped: nothing drains the rings (end_daemon continues it if a check
# fails before the test does)
kill -STOP "$DPID"
sleep 0.5
for c in "${cpus[@]}"; do
	taskset -c "$c" sh -c 'exec "$1"' sh "$HELPERS/fr-segv" >>"$T/segv.pids" 2>/dev/null || true
done
sleep 0.3
kill -CONT "$DPID"
# no more samples: what was dropped from here on was dropped in the stop
kill "${spin[@]}" 2>/dev/null || true

mapfile -t segv <"$T/segv.pids"
[ "${#segv[@]}" -eq "$ncpu" ] || fail "fr-segv printed ${#segv[@]} pids for $ncpu CPUs"
# every fr-segv's signal, exec and crash trigger, once the daemon has
# caught up (the records of the minute but samples: thousands of those)
want=$((ncpu * 3))
for _ in $(seq 50); do
	for ty in signal exec trigger; do
		"$FRCTL" --store "$T/store" dump --last 1m --type "$ty" --format json
	done | jq -r '"\(.type) \(.pid) \(.signal // "-") \(.stack // [] | length)"' >"$T/rare"
	got=0
	for p in "${segv[@]}"; do
		grep -q "^signal $p SIGSEGV " "$T/rare" && got=$((got + 1))
		grep -q "^exec $p " "$T/rare" && got=$((got + 1))
		grep -q "^trigger $p " "$T/rare" && got=$((got + 1))
	done
	[ "$got" -lt "$want" ] || break
	sleep 0.2
done
after=$(counts)
# drops in the stop, per source and CPU
jq -n -c --argjson b "$before" --argjson a "$after" \
	'$a | with_entries(.key as $k | .value |= [range(length) as $i | .[$i] - ($b[$k][$i] // 0)])' >"$T/dropped"
jq -e '.sample | all(. > 0)' "$T/dropped" >/dev/null ||
	fail "samples not dropped on every CPU while the daemon was stopped ($(cat "$T/dropped")): the rings never filled, nothing was tested"
dropped=$(jq '.sample | add' "$T/dropped")
for p in "${segv[@]}"; do
	grep -q "^signal $p SIGSEGV " "$T/rare" ||
		fail "fr-segv[$p]'s signal record lost while samples filled the rings ($dropped samples dropped; drops in the stop by source and CPU: $(cat "$T/dropped"))"
	grep -q "^signal $p SIGSEGV [1-9]" "$T/rare" || fail "fr-segv[$p]'s signal record has no stack: $(grep "^signal $p " "$T/rare")"
	grep -q "^exec $p " "$T/rare" || fail "fr-segv[$p]'s exec record lost while samples filled the rings"
	grep -q "^trigger $p " "$T/rare" || fail "the crash rule did not fire on fr-segv[$p]: $(grep "^trigger " "$T/rare")"
done
ok "$ncpu of $ncpu SIGSEGV records (with their stacks), execs and crash triggers kept while the daemon was stopped and $dropped samples were dropped at 7/8 of the rings"
# (off-CPU waits elsewhere on the machine, ~34 KiB each with their
# waker's, may take the eighth: only the test's own sources are held to it)
others=$(jq '[.proc, .signal] | flatten | add' "$T/dropped")
[ "$others" -eq 0 ] || fail "$others process or signal records dropped in the stop: the headroom did not hold them ($(cat "$T/dropped"))"
ok "no process or signal record dropped"
stop_daemon
echo "ring-headroom: all checks passed"
