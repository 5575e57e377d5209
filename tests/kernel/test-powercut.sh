#!/bin/bash
# Power cuts (issue 49).  The store lives on fr-cutfs, a FUSE file system
# that keeps every write in memory until fsync/fdatasync makes it durable
# and can cut the power: what was not synced is lost (all of it; or all
# but a random 512-byte-sector prefix of the last write; or a random
# subset, reordered).  flightrecd runs the shipped configuration (a store
# small enough to reuse segments every few seconds, the manual rule's
# window short enough for a trigger storm) under an exec storm, a freeze
# loop and a marker loop; the power is cut at random moments, and at the
# Nth segment reuse (truncate), incident write and rename (spare file to
# incident).  After each cut, on what survived:
#   - frctl dump of the whole store exits 0 and warns of nothing but the
#     torn tail;
#   - no record is served that was not fully written: every record of the
#     survived store is in the store the disk would have held with the
#     power on (fr-cutfs replay of its unsynced writes);
#   - every marker exec'd more than sync_interval + a margin before the
#     cut is there, but those the kernel dropped when the daemon shed load
#     (counted by the durable gap records that follow them: markers_in_gaps);
#   - every incident file dumps whole (its checksums hold), and the
#     incidents listed are exactly the files there;
#   - the daemon starts on it, and the records of its last 20 s are all
#     still there after its start (the ring reuses its oldest segments
#     meanwhile: they hold more than a minute).
# The records lost per cut (and how old the oldest lost marker was) are
# printed, one line a cut: the distribution in RELIABILITY.md is made with
# FR_POWERCUTS=100 (tests/bench/powercut.sh).
# FR_POWERCUT_IGNORE_FSYNC=1 runs the harness against a disk that ignores
# fsync (as if the daemon never synced): the test must then fail.
# FR_POWERCUT_FREEZE=0 leaves the freeze loop out.  One cut in six comes
# after the daemon was stopped for 1.5 s: its markers_in_gaps are those
# the kernel dropped meanwhile.
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
CUTS=${FR_POWERCUTS:-8}
SHIPPED="$(dirname "$0")/../../conf/flightrec.conf"
CUTFS="$HELPERS/fr-cutfs"
DISK=$T/disk # what the disk holds: survives every cut
MNT=$T/mnt   # the store's file system, mounted for each run
STORE=$MNT/store
FSPID=
# the shipped sync interval: open chunks are closed and synced this often,
# so a record is durable within it, and a margin for the drain (100 ms)
# and the fdatasync itself
SYNC_MS=1000
MARGIN_MS=500

mkdir -p "$DISK" "$MNT"
# the shipped configuration; a 24 MiB store (16 segments of 1.5 MiB: the
# storm reuses one every few seconds) and the manual rule's window 1 s
# after, so that the freeze loop writes an incident every few seconds
sed -e 's/^  size = "auto";/  size = "24M";/' \
	-e 's/{ name = "manual"; condition = "manual"; before = "5min"; after = "30s"; }/{ name = "manual"; condition = "manual"; before = "10s"; after = "1s"; cooldown = "0s"; max_per_hour = 3600; }/' \
	"$SHIPPED" >"$T/fr.conf"
grep -q '"24M"' "$T/fr.conf" && grep -q 'before = "10s"; after = "1s"' "$T/fr.conf" ||
	fail "could not shrink the store and the manual rule in a copy of the shipped configuration"
grep -q "sync_interval = \"${SYNC_MS}ms\"\|sync_interval = \"$((SYNC_MS / 1000))s\"" "$T/fr.conf" ||
	fail "the shipped sync_interval is not ${SYNC_MS} ms: change SYNC_MS"

unmount() {
	if [ -n "$FSPID" ]; then
		kill -USR1 "$FSPID" 2>/dev/null || true
		wait "$FSPID" 2>/dev/null || true
		FSPID=
	fi
	umount -l "$MNT" 2>/dev/null || true
}
teardown() {
	[ -n "${LOADPIDS:-}" ] && { kill $LOADPIDS 2>/dev/null || true; wait $LOADPIDS 2>/dev/null || true; }
	[ -n "$DPID" ] && { kill -KILL "$DPID" 2>/dev/null || true; wait "$DPID" 2>/dev/null || true; DPID=; }
	unmount
	cleanup
}
trap teardown EXIT

now_ns() { date +%s%N; }

# mount_fs MODE [CUT_ON]: fr-cutfs on $DISK at $MNT
mount_fs() {
	local extra=()
	[ -n "${2:-}" ] && extra+=(--cut-on "$2")
	[ "${FR_POWERCUT_IGNORE_FSYNC:-0}" = 1 ] && extra+=(--ignore-fsync)
	"$CUTFS" --mode "$1" --seed "$RANDOM" --log "$T/pending.log" "${extra[@]}" "$DISK" "$MNT" 2>>"$T/cutfs.log" &
	FSPID=$!
	for _ in $(seq 100); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$FSPID" 2>/dev/null || fail "fr-cutfs exited at mount: $(tail -3 "$T/cutfs.log")"
		sleep 0.05
	done
	fail "fr-cutfs did not mount within 5 s"
}

start() {
	"$FLIGHTRECD" --config "$T/fr.conf" --store "$STORE" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	for _ in $(seq 200); do
		"$FRCTL" --store "$STORE" status >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || fail "flightrecd exited during start on the survived store"
		sleep 0.1
	done
	fail "flightrecd did not answer status within 20 s"
}

# dump_to STORE OUT: the whole store as JSON; fails the test unless it
# exits 0.  Its warnings go to OUT.err
dump_to() {
	local rc=0
	"$FRCTL" --store "$1" dump --format json -q >"$2" 2>"$2.err" || rc=$?
	[ "$rc" -eq 0 ] || fail "cut $i: frctl dump of $1 exited $rc: $(head -c 400 "$2.err")"
}

# the load: an exec storm, a marker loop (numbered execs, their times
# logged), a freeze loop (a trigger storm on the manual rule)
"$HELPERS/fr-exec-storm" 100000000 &
LOADPIDS=$!
(
	n=0
	while :; do
		t=$(now_ns)
		/bin/true "cutmark-$n"
		echo "$n $t" >>"$T/marks"
		n=$((n + 1))
		sleep 0.02
	done
) &
LOADPIDS="$LOADPIDS $!"
# (a subshell of its own, ended by its pid: "cond && ( ... ) &" would
# leave the loop running when its parent is killed)
if [ "${FR_POWERCUT_FREEZE:-1}" = 1 ]; then
	(
		while :; do
			"$FRCTL" --store "$STORE" freeze --reason "powercut storm" >/dev/null 2>&1 || true
			sleep 1.5
		done
	) &
	LOADPIDS="$LOADPIDS $!"
fi

modes=(drop torn reorder)
: >"$T/cuts"
for i in $(seq "$CUTS"); do
	mode=${modes[$((i % 3))]}
	# one cut in two at a chosen moment: the Nth segment reuse, incident
	# write, rename; the others after a random time
	case $((i % 6)) in
	1) on="truncate:$((RANDOM % 2 + 1))" ;;
	3) on="write:$((RANDOM % 40 + 1))" ;;
	5) on="rename:$((RANDOM % 2 + 1))" ;;
	*) on= ;;
	esac
	mount_fs "$mode" "$on"
	start
	ready=$(now_ns)
	if [ "$i" -gt 1 ]; then
		# the records the previous cut left must still all be there now
		# that the daemon recovered the store: those of its last 20 s
		# (recovery works on the newest segment; the oldest, which the
		# ring reuses every few seconds here, hold a minute and more)
		dump_to "$STORE" "$T/restarted.json"
		/usr/bin/python3 - "$T/durable.json" "$T/restarted.json" "$cut" <<'PY' || fail "cut $((i - 1)): the restarted daemon lost records that survived the cut"
import datetime, json, sys
cut = int(sys.argv[3])
# the dump's times are RFC 3339 UTC with 9 decimals: compared as text
floor = datetime.datetime.fromtimestamp((cut - 20 * 10**9) // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
def keys(p):
    out = {}
    for line in open(p, encoding="utf-8"):
        r = json.loads(line)
        k = (r["type"], r["time"], r.get("cpu"), r.get("pid"), r.get("tid"))
        out[k] = out.get(k, 0) + 1
    return out
before, after = keys(sys.argv[1]), keys(sys.argv[2])
gone = [k for k, n in before.items() if after.get(k, 0) < n and k[1] >= floor]
if gone:
    print("%d records of the survived store's last 20 s are gone after the restart, e.g. %s" % (len(gone), gone[:3]))
    sys.exit(1)
PY
	fi
	how=time
	if [ -n "$on" ]; then
		kill -USR2 "$FSPID"
		deadline=$((SECONDS + 20))
		while kill -0 "$FSPID" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.05; done
		kill -0 "$FSPID" 2>/dev/null && kill -USR1 "$FSPID" || how=$on
	else
		if [ $((i % 6)) = 4 ]; then
			# a stalled daemon (as under a CPU hog): the kernel drops
			# what the rings cannot hold, and gap records count it
			kill -STOP "$DPID"
			sleep 1.5
			kill -CONT "$DPID"
		fi
		sleep "$((RANDOM % 4 + 2)).$((RANDOM % 10))"
		kill -USR1 "$FSPID"
	fi
	wait "$FSPID" 2>/dev/null || true
	cut=$(now_ns)
	FSPID=
	# the machine is off: the daemon goes with it
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	umount -l "$MNT"

	# the store the disk would have held with the power on: all but the
	# incident files (hundreds of MB, read whole on their own below)
	rm -rf "$T/ghost"
	mkdir -p "$T/ghost/store"
	for f in "$DISK/store"/*; do
		[ "$(basename "$f")" = incidents ] || cp -a "$f" "$T/ghost/store/"
	done
	"$CUTFS" replay "$T/pending.log" "$T/ghost" >/dev/null || fail "cut $i: cannot replay the unsynced writes"
	dump_to "$T/ghost/store" "$T/full.json"
	dump_to "$DISK/store" "$T/durable.json"
	# incidents: every file there dumps whole; the list is the files
	ls "$DISK/store/incidents" 2>/dev/null | sed -n 's/\.fri$//p' | sort >"$T/inc.files"
	"$FRCTL" --store "$DISK/store" incidents --json | jq -r '.[].id' | sort >"$T/inc.listed" ||
		fail "cut $i: frctl incidents failed on the survived store"
	cmp -s "$T/inc.files" "$T/inc.listed" ||
		fail "cut $i: incidents listed ($(tr '\n' ' ' <"$T/inc.listed")) are not the files ($(tr '\n' ' ' <"$T/inc.files"))"
	# each file read whole once (an earlier cut's files, unchanged since,
	# were read then): id and size
	touch "$T/inc.verified"
	while read -r id; do
		sz=$(stat -c %s "$DISK/store/incidents/$id.fri")
		grep -qx "$id $sz" "$T/inc.verified" && continue
		rc=0
		"$FRCTL" --store "$DISK/store" dump --incident "$id" -q >/dev/null 2>"$T/inc.err" || rc=$?
		[ "$rc" -eq 0 ] && [ ! -s "$T/inc.err" ] || fail "cut $i: incident $id does not read whole (exit $rc): $(head -c 300 "$T/inc.err")"
		echo "$id $sz" >>"$T/inc.verified"
	done <"$T/inc.files"

	/usr/bin/python3 - "$T/durable.json" "$T/full.json" "$T/marks" "$ready" "$cut" \
		"$((SYNC_MS + MARGIN_MS))" "$i" "$mode" "$how" "$(wc -l <"$T/inc.files")" <<'PY' >>"$T/cuts" || fail "cut $i: $(tail -3 "$T/cuts")"
import datetime, json, sys
durable, full, marks = sys.argv[1:4]
ready, cut, bound_ms = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
i, mode, how, incidents = sys.argv[7], sys.argv[8], sys.argv[9], sys.argv[10]
def load(p):
    keys, seen, gaps = {}, set(), {}
    for line in open(p, encoding="utf-8"):
        r = json.loads(line)
        k = (r["type"], r["time"], r.get("cpu"), r.get("pid"), r.get("tid"))
        keys[k] = keys.get(k, 0) + 1
        if r["type"] == "exec" and len(r.get("argv", [])) == 2 and r["argv"][1].startswith("cutmark-"):
            seen.add(int(r["argv"][1][8:]))
        elif r["type"] == "gap":
            gaps.setdefault(r["cpu"], []).append([r["time"], int(r["lost"])])
    return keys, seen, gaps
dk, dseen, dgaps = load(durable)
fk, fseen, _ = load(full)
for g in dgaps.values():
    g.sort()
# a marker the kernel dropped (its rings full: the daemon sheds load when
# draining them takes more than its budget) is not the cut's loss, and is
# not silent: the next gap record of the CPU it ran on counts it.  Which
# CPU is not known, so a missing marker is the kernel's when, on some CPU,
# the first durable gap record after it counts losses; and no more
# markers are the kernel's than those gap records count (each one's lost
# is spent as markers are put down to it).
def rfc3339(ns):
    return "%s.%09dZ" % (datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"), ns % 10**9)
def kernel_gap(t):
    when = rfc3339(t)
    for g in dgaps.values():
        first = next((gap for gap in g if gap[0] >= when), None)
        if first and first[1] > 0:
            return first
    return None
extra = [k for k, n in dk.items() if fk.get(k, 0) < n]
if extra:
    print("cut %s (%s): %d records served that were never fully written, e.g. %s" % (i, mode, len(extra), extra[:3]))
    sys.exit(1)
# lost on the disk: written, not synced
lost = sum(n - dk.get(k, 0) for k, n in fk.items())
# lost in all: markers exec'd while the daemon ran that did not survive
# (still in the rings, the daemon's memory, or unsynced on the disk)
must, missing, gone, oldest = 0, [], 0, 0.0
kernel = 0
for line in open(marks):
    w = line.split()
    if len(w) != 2:
        continue  # the line being written
    n, t = int(w[0]), int(w[1])
    if not ready <= t <= cut:
        continue
    if n not in dseen:
        g = kernel_gap(t)
        if g:
            g[1] -= 1
            kernel += 1
            continue
        gone += 1
        oldest = max(oldest, (cut - t) / 1e6)
    if t <= cut - bound_ms * 1000000:
        must += 1
        if n not in dseen:
            missing.append((n, round((cut - t) / 1e6)))
if missing:
    print("cut %s (%s, %s): %d of %d markers exec'd more than %d ms before the cut are lost, e.g. %s"
          % (i, mode, how, len(missing), must, bound_ms, missing[:5]))
    sys.exit(1)
print("cut %s: mode=%s at=%s lost_unsynced=%d lost_markers=%d oldest_lost_marker_ms=%.0f markers_checked=%d kept=%d incidents=%d markers_in_gaps=%d"
      % (i, mode, how, lost, gone, oldest, must, sum(dk.values()), int(incidents), kernel))
PY
	tail -1 "$T/cuts"
done

# the last cut's survivors, read by a daemon started on them
mount_fs drop
start
dump_to "$STORE" "$T/restarted.json"
kill -TERM "$DPID"
wait "$DPID" || fail "flightrecd exited $? on SIGTERM after the last cut"
DPID=
unmount
/usr/bin/python3 - "$T/cuts" <<'PY'
import sys
rows = [dict(w.split("=", 1) for w in l.split() if "=" in w) for l in open(sys.argv[1])]
lost = sorted(int(r["lost_unsynced"]) for r in rows)
marks = sorted(int(r["lost_markers"]) for r in rows)
age = sorted(float(r["oldest_lost_marker_ms"]) for r in rows)
shed = sum(int(r["markers_in_gaps"]) for r in rows)
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
print("ok: %d power cuts, each survived store dumps whole, holds no record not fully written, and every marker older than the bound" % len(rows))
print("records written but not synced, lost per cut: min %d, median %d, p90 %d, max %d" % (lost[0], q(lost, .5), q(lost, .9), lost[-1]))
print("markers lost per cut (50 a second): min %d, median %d, p90 %d, max %d; oldest lost marker: median %.0f ms, p90 %.0f ms, max %.0f ms before the cut"
      % (marks[0], q(marks, .5), q(marks, .9), marks[-1], q(age, .5), q(age, .9), age[-1]))
print("markers the kernel dropped while the daemon shed load, counted by gap records (not the cuts' losses): %d in all" % shed)
PY
