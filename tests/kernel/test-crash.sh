#!/bin/bash
# Crash safety: flightrecd is killed with SIGKILL at 50 random moments under
# a write-heavy load (an exec storm) while a marker loop execs numbered
# markers.  Every restart must succeed; the final dump must not fail, must
# be valid JSON, must hold no record that was not written (no unknown or
# duplicated marker), and must hold every marker exec'd while a daemon ran
# and older than the sync interval (+ 200 ms for the fdatasync itself)
# before the kill.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"
KILLS=${FR_CRASH_KILLS:-50}
SYNC_MS=500
MARGIN_MS=200

# a store the storm cannot wrap around in 50 runs: a marker lost to
# retention is no crash's doing (64 MiB wrapped once the daemon dropped
# fewer of the storm's records, and the oldest runs' markers went)
cat >"$T/fr.conf" <<CONF
store = { size = "256M"; segments = 8; sync_interval = "${SYNC_MS}ms"; };
CONF

now_ns() { date +%s%N; }

# background load and markers; ended by pid in cleanup via EXIT trap chain
"$STORM" 100000000 &
STORM_PID=$!
(
	n=0
	while :; do
		t=$(now_ns)
		/bin/true "crashmark-$n"
		echo "$n $t" >>"$T/marks"
		n=$((n + 1))
		sleep 0.02
	done
) &
MARK_PID=$!
trap 'kill $STORM_PID $MARK_PID 2>/dev/null || true; wait $STORM_PID $MARK_PID 2>/dev/null || true; cleanup' EXIT

for i in $(seq "$KILLS"); do
	start_daemon "$T/fr.conf"
	ready=$(now_ns)
	ms=$((300 + RANDOM % 1200))   # 0.3-1.5 s: over a whole flush interval
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	killed=$(now_ns)
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	echo "$ready $killed" >>"$T/runs"
done
kill $STORM_PID $MARK_PID || true
wait $STORM_PID $MARK_PID 2>/dev/null || true
ok "$KILLS kills, every restart succeeded"

rc=0
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json" 2>"$T/dump.err" || rc=$?
[ "$rc" -eq 0 ] || fail "dump after $KILLS crashes exited $rc: $(cat "$T/dump.err")"
python3 - "$T/dump.json" "$T/marks" "$T/runs" "$SYNC_MS" "$MARGIN_MS" <<'PY' || fail "crash-safety check failed"
import json, re, sys
dump, marks, runs, sync_ms, margin_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
seen = {}
records = 0
with open(dump, encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        records += 1
        if r["type"] == "exec" and len(r["argv"]) == 2 and r["argv"][1].startswith("crashmark-"):
            n = int(r["argv"][1][len("crashmark-"):])
            seen[n] = seen.get(n, 0) + 1
logged = {}
for line in open(marks):
    n, t = line.split()
    logged[int(n)] = int(t)
top = max(logged) if logged else -1
bad = [n for n in seen if n > top + 1]
dups = [n for n, c in seen.items() if c > 1]
if bad or dups:
    print("markers that were never exec'd: %s; duplicated: %s" % (bad[:10], dups[:10]))
    sys.exit(1)
must, missing, oldest_lost = 0, [], 0.0
for line in open(runs):
    ready, killed = map(int, line.split())
    deadline = killed - (sync_ms + margin_ms) * 1000000
    for n, t in logged.items():
        if ready <= t <= killed and n not in seen:
            oldest_lost = max(oldest_lost, (killed - t) / 1e6)
        if ready <= t <= deadline:
            must += 1
            if n not in seen:
                missing.append((n, (killed - t) / 1e6))
if missing:
    print("%d of %d markers older than %d ms before a kill are missing, e.g. %s" %
          (len(missing), must, sync_ms + margin_ms, missing[:5]))
    print("(the store holds %d records; the first run's marker %d %s)" %
          (records, min(logged), "is there" if min(logged) in seen else "is not: did the store wrap?"))
    sys.exit(1)
print("ok: %d records decode; %d markers recorded, none unknown or duplicated; all %d markers older than sync+%d ms before each kill present"
      % (records, len(seen), must, margin_ms))
print("measured loss window: the oldest marker lost was exec'd %.0f ms before its kill (sync_interval %d ms)"
      % (oldest_lost, sync_ms))
PY
