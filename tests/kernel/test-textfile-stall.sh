#!/bin/bash
# The Prometheus textfile on a file system that stops answering does not
# stop the recording: it is written on a thread of its own
# (daemon/textfile.c).  The textfile's directory is on fr-cutfs, whose
# writes to it take 5 s for 6 s (SLOW5000; the file system is
# single-threaded, so the rename and the next create wait too), with a
# 1 s interval, while 200 000 context switches a second are recorded in
# full mode.  Written in the loop, each write stopped the drain for 5 s.
# The rings are 8 MiB here, ~480 ms of that load: a 5 s stop still drops
# 90 % of it, while the 1 MiB default (60 ms) overflowed in the ASan
# build by scheduling alone (704 and 1 757 records, no window cut, in 2
# of 4 runs: the sanitized drain of 100 ms of this load takes ~60 ms).
#   - the kernel drops none of the records, and status answers within a
#     second throughout;
#   - status counts the intervals skipped behind the slow write, and the
#     log says so once;
#   - once the disk is fast, the file is written again, and the log says
#     the writes keep up again.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
CUTFS="$HELPERS/fr-cutfs"
GEN="$BUILD/tests/bench/switch-gen"
MNT=$T/mnt
[ -x "$GEN" ] || fail "$GEN is not built (ninja -C $BUILD)"
[ "$(nproc)" -ge 2 ] || { echo "ok: one CPU: the load would starve the daemon (skipped)"; exit 0; }
# (drain_cpu: this load takes ~18 % of a CPU to drain, at the shipped
# 20 % cap, where the overload governor sheds now and then: not what
# this tests; test-slow-disk.sh)
cat >"$T/fr.conf" <<CONF
recorder = { drain_cpu = 60; ring_size = "8M"; };
sources = { sched = { full = true; }; sample = { enabled = false; }; };
metrics = { enabled = false; };
prometheus = { textfile = "$MNT/flightrec.prom"; interval = "1s"; };
CONF

cutfs_mount "$CUTFS" "$MNT"

start_daemon "$T/fr.conf"
for _ in $(seq 50); do [ -f "$MNT/flightrec.prom" ] && break; sleep 0.1; done
[ -f "$MNT/flightrec.prom" ] || fail "no textfile on the fast disk"
st() { "$FRCTL" --store "$T/store" status --json; }
st >"$T/st0.json"

taskset -c $(($(nproc) - 1)) "$GEN" 200000 16 >"$T/gen.out" &
PIDS="$PIDS $!"
sleep 1

# the stall: every write to the textfile takes 5 s, for 6 s
cutfs_faults "write SLOW5000 flightrec.prom"
slowest=0
for _ in $(seq 12); do
	t0=$(date +%s%N)
	st >"$T/st.json" || fail "status does not answer while the textfile's disk stalls"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$slowest" ] && slowest=$ms
	sleep 0.5
done
cutfs_faults
wait $PIDS 2>/dev/null || true
PIDS=
[ "$slowest" -lt 1000 ] || fail "status took $slowest ms while the textfile's disk stalled"

sleep 7 # the last slow write ends; two intervals write again
st >"$T/st1.json"
dropped=$(jq -n --slurpfile a "$T/st0.json" --slurpfile b "$T/st1.json" \
	'[range(0; $b[0].per_cpu | length) as $i | $b[0].sources.sched.dropped_per_cpu[$i] - $a[0].sources.sched.dropped_per_cpu[$i]] | add')
emitted=$(jq '[.per_cpu[] | .emitted] | add' "$T/st1.json")
cut=$(jq -n --slurpfile a "$T/st0.json" --slurpfile b "$T/st1.json" '$b[0].overload.windows_cut - $a[0].overload.windows_cut')
[ "$dropped" = 0 ] || fail "$dropped of $emitted records dropped in the kernel while the textfile's disk stalled ($cut drain windows cut by the CPU cap)"
ok "none of $emitted records dropped, status answered within $slowest ms, at $(cat "$T/gen.out") switches/s"

skipped=$(jq .textfile.skipped "$T/st1.json")
[ "$skipped" -ge 3 ] || fail "status counts $skipped intervals skipped behind 5 s writes"
n=$(grep -c "textfile's last write has not ended" "$T/daemon.log" || true)
[ "$n" = 1 ] || fail "$n log lines for the slow textfile, want 1"
w0=$(jq .textfile.written "$T/st1.json")
sleep 2.5
w1=$(st | jq .textfile.written)
[ "$w1" -gt "$w0" ] || fail "the textfile is not written again once its disk is fast ($w0, then $w1)"
grep -q "textfile's writes keep up again" "$T/daemon.log" || fail "no line saying the textfile's writes keep up again"
grep -q '^flightrec_up 1$' "$MNT/flightrec.prom" || fail "the textfile written after the stall is not whole"
ok "$skipped intervals skipped and counted, said once; written again after ($w0 -> $w1)"
