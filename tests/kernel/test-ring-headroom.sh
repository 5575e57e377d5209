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
ncpu=$(nproc)
for c in $(seq 0 $((ncpu - 1))); do
	taskset -c "$c" "$HELPERS/fr-spin" 20 >/dev/null &
	PIDS="$PIDS $!"
done
sleep 1
before=$("$FRCTL" --store "$T/store" status --json | jq '.sources.sample.dropped')

# stopped: nothing drains the rings.  Continued whatever happens, before
# any check can fail
kill -STOP "$DPID"
sleep 0.5
for c in $(seq 0 $((ncpu - 1))); do
	taskset -c "$c" sh -c 'exec "$1"' sh "$HELPERS/fr-segv" >>"$T/segv.pids" 2>/dev/null || true
done
sleep 0.3
kill -CONT "$DPID"

mapfile -t segv <"$T/segv.pids"
[ "${#segv[@]}" -eq "$ncpu" ] || fail "fr-segv printed ${#segv[@]} pids for $ncpu CPUs"
# every fr-segv's signal record, once the daemon has caught up (the
# records of the minute but samples: thousands of those)
for _ in $(seq 50); do
	for ty in signal exec trigger; do
		"$FRCTL" --store "$T/store" dump --last 1m --type "$ty" --format json
	done | jq -r '"\(.type) \(.pid) \(.signal // "-") \(.stack // [] | length)"' >"$T/rare"
	got=0
	for p in "${segv[@]}"; do
		grep -q "^signal $p SIGSEGV " "$T/rare" && got=$((got + 1))
	done
	[ "$got" -lt "$ncpu" ] || break
	sleep 0.2
done
st=$("$FRCTL" --store "$T/store" status --json)
dropped=$(($(jq '.sources.sample.dropped' <<<"$st") - before))
[ "$dropped" -gt 0 ] || fail "no sample dropped while the daemon was stopped: the rings never filled, nothing was tested"
[ "$got" -eq "$ncpu" ] ||
	fail "$got of $ncpu fr-segv signal records kept while samples filled the rings ($dropped samples dropped; dropped by source: $(jq -c '[.sources | to_entries[] | {(.key): .value.dropped}] | add' <<<"$st"))"
for p in "${segv[@]}"; do
	grep -q "^exec $p " "$T/rare" || fail "fr-segv[$p]'s exec record lost while samples filled the rings"
	grep -q "^trigger $p " "$T/rare" || fail "the crash rule did not fire on fr-segv[$p]: $(grep "^trigger " "$T/rare")"
	grep -q "^signal $p SIGSEGV [1-9]" "$T/rare" || fail "fr-segv[$p]'s signal record has no stack: $(grep "^signal $p " "$T/rare")"
done
ok "$ncpu of $ncpu SIGSEGV records (with their stacks), execs and crash triggers kept while the daemon was stopped and $dropped samples were dropped at 7/8 of the rings"
others=$(jq -c '[.sources | to_entries[] | select(.key != "sample") | .value.dropped // 0] | add' <<<"$st")
[ "$others" -eq 0 ] || fail "$others records of other sources dropped: the headroom did not hold them"
ok "no record of another source dropped"
stop_daemon
echo "ring-headroom: all checks passed"
