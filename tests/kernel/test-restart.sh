#!/bin/bash
# Restart under load: flightrecd is stopped (SIGTERM) and started 20 times
# while an exec storm and a marker loop run.  Every stop must exit 0 and
# every start answer status; afterwards `frctl dump` reads the whole store
# with no damaged chunk or undecodable record (it warns on stderr if it
# skips any), and each run is bracketed in the store by its "started" and
# "stopped" marks, alternating, with the daemon's pid: the time between a
# stop and the next start reads as "not recording", not as a quiet machine.
# Markers exec'd while a daemon ran, away from its start and stop, are all
# there.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
RESTARTS=${FR_RESTARTS:-20}

cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 8; sync_interval = "200ms"; };
CONF

"$HELPERS/fr-exec-storm" 100000000 &
STORM_PID=$!
(
	n=0
	while :; do
		echo "$n $(date +%s%N)" >>"$T/marks"
		/bin/true "restartmark-$n"
		n=$((n + 1))
		sleep 0.05
	done
) &
MARK_PID=$!
trap 'kill $STORM_PID $MARK_PID 2>/dev/null || true; wait $STORM_PID $MARK_PID 2>/dev/null || true; cleanup' EXIT

for i in $(seq "$RESTARTS"); do
	start_daemon "$T/fr.conf"
	echo "$DPID $(date +%s%N)" >>"$T/runs"
	sleep "0.$((RANDOM % 5 + 3))"
	echo "$(date +%s%N)" >>"$T/stops"
	stop_daemon   # fails the test unless flightrecd exits 0
done
kill $STORM_PID $MARK_PID
wait $STORM_PID $MARK_PID 2>/dev/null || true
ok "$RESTARTS stop/start cycles under load, every stop exited 0"

rc=0
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json" 2>"$T/dump.err" || rc=$?
[ "$rc" -eq 0 ] || fail "dump exited $rc: $(cat "$T/dump.err")"
[ ! -s "$T/dump.err" ] || fail "dump skipped damaged data: $(cat "$T/dump.err")"
ok "the whole store reads back: no damaged chunk, no undecodable record"

paste -d' ' "$T/runs" "$T/stops" >"$T/windows"
python3 - "$T/dump.json" "$T/windows" "$T/marks" <<'PY' || fail "restart check failed"
import json, sys
dump, windows, marks = sys.argv[1:4]
runs = [tuple(map(int, l.split())) for l in open(windows)]   # pid, ready ns, stop ns
life, seen = [], set()
for line in open(dump, encoding="utf-8"):
    r = json.loads(line)
    if r["type"] == "mark" and r["pid"] == 0 and r["text"].startswith("flightrecd "):
        w = r["text"].split()   # flightrecd started recording (pid N)
        life.append((w[1], int(w[4].rstrip(")"))))
    elif r["type"] == "exec" and len(r["argv"]) == 2 and r["argv"][1].startswith("restartmark-"):
        seen.add(int(r["argv"][1].split("-")[1]))
want = []
for pid, _, _ in runs:
    want += [("started", pid), ("stopped", pid)]
if life != want:
    print("lifecycle marks in the store:", life[:8], "... expected", want[:8])
    sys.exit(1)
print("ok: %d runs, each bracketed by its started/stopped marks in order" % len(runs))
missing, must = [], 0
for l in open(marks):
    n, t = map(int, l.split())
    for pid, ready, stop in runs:
        # well inside a run: the exec happens right after the line is logged
        if ready + 100_000_000 <= t <= stop - 300_000_000:
            must += 1
            if n not in seen:
                missing.append(n)
if missing:
    print("%d of %d markers exec'd while a daemon ran are missing: %s" % (len(missing), must, missing[:10]))
    sys.exit(1)
print("ok: all %d markers exec'd while a daemon ran are in the store" % must)
PY
