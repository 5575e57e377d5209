#!/bin/bash
# A failing disk (issue 49): the store lives on fr-cutfs, which fails
# requests on command (tests/helpers/fr-cutfs.c --faults).  Under an exec
# storm and a marker loop, with the shipped configuration:
#   1. writes fail with EIO for 3 s;
#   2. fdatasync fails with EIO for 3 s (the unsynced writes are lost, as
#      Linux drops pages it could not write back);
#   3. reads fail with EIO: frctl dump says so in one line and exits 1;
#      recording goes on;
#   4. an incident's write fails with ENOSPC, then succeeds.
# Each time the daemon stays up and answers, says once what failed (log,
# status, the Prometheus counter), recovers by itself when the errors
# stop, and loses nothing silently: the gap records account for every
# record it counted lost, and each marker missing from the store falls in
# a fault's time.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
SHIPPED="$(dirname "$0")/../../conf/flightrec.conf"
CUTFS="$HELPERS/fr-cutfs"
MNT=$T/mnt
STORE=$MNT/store

# the shipped configuration, the manual rule's window short, the
# Prometheus textfile beside the test
sed -e 's/{ name = "manual"; condition = "manual"; before = "5min"; after = "30s"; }/{ name = "manual"; condition = "manual"; before = "10s"; after = "1s"; }/' \
	-e "s|^  textfile = .*|  textfile = \"$T/flightrec.prom\";|" -e 's/^  interval = "10s";/  interval = "1s";/' \
	"$SHIPPED" >"$T/fr.conf"
grep -q 'before = "10s"; after = "1s"' "$T/fr.conf" && grep -q "textfile = \"$T/flightrec.prom\"" "$T/fr.conf" ||
	fail "could not shorten the manual rule and move the textfile in a copy of the shipped configuration"

now_ns() { date +%s%N; }

cutfs_mount "$CUTFS" "$MNT"

"$FLIGHTRECD" --config "$T/fr.conf" --store "$STORE" >>"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 200); do
	"$FRCTL" --store "$STORE" status >/dev/null 2>&1 && break
	kill -0 "$DPID" 2>/dev/null || fail "flightrecd exited during start"
	sleep 0.1
done

"$HELPERS/fr-exec-storm" 100000000 &
LOADPIDS=$!
(
	n=0
	while :; do
		t=$(now_ns)
		/bin/true "faultmark-$n"
		echo "$n $t" >>"$T/marks"
		n=$((n + 1))
		sleep 0.02
	done
) &
LOADPIDS="$LOADPIDS $!"
sleep 2

# fault_for SECONDS LINE: the disk fails as LINE says for SECONDS; the
# window (ns) goes to $T/windows
fault_for() {
	local a
	a=$(now_ns)
	cutfs_faults "$2"
	sleep "$1"
	cutfs_faults
	echo "$a $(now_ns) $2" >>"$T/windows"
}

# alive_and_said N WHAT: the daemon runs, answers, and its log has N
# "Failed to write/sync the store" lines and N "resumed" lines
alive_and_said() {
	local n r
	kill -0 "$DPID" 2>/dev/null || fail "flightrecd died on $2"
	"$FRCTL" --store "$STORE" status --json >"$T/st.json" || fail "status does not answer after $2"
	n=$(grep -c 'Failed to write to the store, records are being lost and counted\|Failed to sync the store (fdatasync), the records written since the sync before are counted lost' "$T/daemon.log" || true)
	[ "$n" -eq "$1" ] || fail "after $2: $n 'Failed to write/sync' log lines, expected $1 (once per episode)"
	for _ in $(seq 50); do
		r=$(grep -c 'Writing to the store resumed' "$T/daemon.log" || true)
		[ "$r" -eq "$1" ] && return 0
		sleep 0.1
	done
	fail "after $2: writing did not resume ($r 'resumed' lines, expected $1)"
}

fault_for 3 "write EIO store/segments"
sleep 2
alive_and_said 1 "write EIO"
grep -q 'Failed to write to the store.*Input/output error' "$T/daemon.log" || fail "the write failure's log line does not name EIO"
jq -e '.store.chunks_failed > 0 and .store.last_error == "Input/output error"' "$T/st.json" >/dev/null ||
	fail "status does not show the failed writes: $(jq -c .store "$T/st.json")"
ok "write EIO: daemon up, said once (log, status chunks_failed $(jq .store.chunks_failed "$T/st.json")), resumed"
failed1=$(jq .store.chunks_failed "$T/st.json")

fault_for 3 "fsync EIO store/segments"
sleep 2
alive_and_said 2 "fsync EIO"
grep -q '^<3>Failed to sync the store (fdatasync).*Input/output error' "$T/daemon.log" || fail "the sync failure's log line does not say fdatasync and EIO"
jq -e --argjson f "$failed1" '.store.syncs_failed > 0 and .store.chunks_failed > $f' "$T/st.json" >/dev/null ||
	fail "status does not count the failed syncs and their chunks: $(jq -c .store "$T/st.json")"
ok "fsync EIO: daemon up, said once, $(jq .store.syncs_failed "$T/st.json") syncs failed, their chunks counted failed, resumed"

# reads: frctl cannot read the store, and says so; recording goes on
cutfs_faults "read EIO store/segments"
rc=0
"$FRCTL" --store "$STORE" dump -q >/dev/null 2>"$T/read.err" || rc=$?
cutfs_faults
[ "$rc" -ne 0 ] || fail "frctl dump exited 0 on a store it could not read: $(head -c 400 "$T/read.err")"
[ "$(wc -l <"$T/read.err")" -eq 1 ] && grep -q 'Input/output error' "$T/read.err" ||
	fail "frctl dump on read errors should say so in one line: $(head -c 400 "$T/read.err")"
ok "read EIO: frctl dump exits $rc: $(cat "$T/read.err")"

# an incident whose write meets a full disk, then one that does not
cutfs_faults "write ENOSPC incidents/"
a=$(now_ns)
"$FRCTL" --store "$STORE" freeze --reason "disk full" >/dev/null || fail "freeze refused"
sleep 4
cutfs_faults
echo "$a $(now_ns) incident ENOSPC" >>"$T/windows"
kill -0 "$DPID" 2>/dev/null || fail "flightrecd died on an incident's ENOSPC"
grep -E -q '<[0-4]>.*(ncident|spare).*No space left on device' "$T/daemon.log" ||
	fail "the incident's ENOSPC was not logged: $(grep -i incident "$T/daemon.log" | tail -3)"
"$FRCTL" --store "$STORE" freeze --reason "disk back" >/dev/null || fail "freeze refused"
for _ in $(seq 100); do
	"$FRCTL" --store "$STORE" incidents --json >"$T/inc.json" 2>/dev/null || true
	jq -e '[.[] | select(.reason == "disk back")] | length > 0' "$T/inc.json" >/dev/null 2>&1 && break
	sleep 0.1
done
jq -e '[.[] | select(.reason == "disk back")] | length > 0' "$T/inc.json" >/dev/null ||
	fail "no incident after the disk had room again: $(cat "$T/inc.json")"
ls "$STORE/incidents" | sed -n 's/\.fri$//p' | sort >"$T/inc.files"
jq -r '.[].id' "$T/inc.json" | sort | cmp -s - "$T/inc.files" || fail "incidents listed are not the files there"
while read -r id; do
	"$FRCTL" --store "$STORE" dump --incident "$id" -q >/dev/null 2>"$T/inc.err" && [ ! -s "$T/inc.err" ] ||
		fail "incident $id does not read whole: $(head -c 300 "$T/inc.err")"
done <"$T/inc.files"
ok "incident ENOSPC: logged, daemon up, the next incident written; every incident file reads whole ($(wc -l <"$T/inc.files"))"

sleep 2
kill $LOADPIDS
wait $LOADPIDS 2>/dev/null || true
LOADPIDS=
sleep 1.5
"$FRCTL" --store "$STORE" status --json >"$T/st.json"
"$FRCTL" --store "$STORE" dump --format json -q >"$T/dump.json"
want=$(jq '[.per_cpu[] | .dropped + .lost_write] | add' "$T/st.json")
got=$(jq -s '[.[] | select(.type == "gap") | .lost] | add // 0' "$T/dump.json")
[ "$got" -eq "$want" ] || fail "gap records say $got lost, the daemon counted $want"
ok "gap records account for all $want records counted lost"
prom=$(grep -E '^flightrec_store_(chunk_write_failures|sync_failures)_total' "$T/flightrec.prom" | tr '\n' ' ')
echo "$prom" | grep -q 'flightrec_store_sync_failures_total [1-9]' && echo "$prom" | grep -q 'flightrec_store_chunk_write_failures_total [1-9]' ||
	fail "the Prometheus textfile does not count the failures: $prom"
ok "Prometheus: $prom"

/usr/bin/python3 - "$T/dump.json" "$T/marks" "$T/windows" <<'PY' || fail "markers lost outside the faults"
import json, sys
seen = set()
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if r["type"] == "exec" and len(r.get("argv", [])) == 2 and r["argv"][1].startswith("faultmark-"):
        seen.add(int(r["argv"][1][10:]))
wins = [tuple(map(int, l.split()[:2])) for l in open(sys.argv[3])]
marks = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
# a record is written within the sync interval (1 s) after it happened,
# and a failed sync takes the second before it: a margin of 2.5 s
margin = 2_500_000_000
lost, outside = 0, []
for n, t in marks[:-10]:
    if n in seen:
        continue
    lost += 1
    if not any(a - margin <= t <= b + margin for a, b in wins):
        outside.append(n)
if outside:
    print("%d markers lost outside any fault's time, e.g. %s" % (len(outside), outside[:5]))
    sys.exit(1)
print("ok: %d of %d markers lost, all within a fault's time" % (lost, len(marks) - 10))
PY
