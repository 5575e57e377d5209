#!/bin/bash
# Incident files and crashes (the spare file, see daemon/incident-spare.h):
#   - flightrecd is killed with SIGKILL at random moments while incidents
#     are being written (frctl freeze in a loop); after every kill and at
#     the end, every ID.fri present is whole: sealed, its length the file's,
#     its chunk area matching its crc (checked here in Python, not with the
#     daemon's code), and frctl dumps it; every incident the daemon
#     reported durable (its "captured" or recovery log line) still exists;
#     and incidents did go through the spare (status: triggers.spare.used)
#   - an incident left durable in incidents/.spare (a crash between its
#     fdatasync and its rename) gets its name at the next start, readable
#   - a torn spare (a crash mid-write) is removed, never given a name
#   - a durable spare whose ID.fri exists is not lost: it becomes ID-2.fri
#   - a spare that cannot be opened or checked is kept, not removed
#   - a rename that fails (the directory made immutable) leaves the incident
#     durable in the spare: announced and its action run with that path,
#     counted in status, its id not given to the next incident; it gets its
#     name at the first incident after the directory is writable again
#   - stopping: an incident written at shutdown is not followed by a new
#     spare; a spare left at exit, even holding data written ahead, is made
#     again over its own file at the next start: same inode, all zeros
#   - readers take a sealed incident's length: zeros after it are not read,
#     and a file cut short is reported as truncated, in one line
BUILD=$1
. "$(dirname "$0")/lib.sh"
KILLS=${FR_INCIDENT_CRASH_KILLS:-12}
INC=$T/store/incidents

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "2s"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "0s";
                         cooldown = "0s"; max_per_hour = 3600; } );
             incidents = { max = 100000; }; }; # none removed for the budget
CONF

# every ID.fri whole; prints how many
check_whole() {
	python3 - "$INC" <<'PY'
import os, struct, sys, zlib
d = sys.argv[1]
n = 0
for name in sorted(os.listdir(d)):
    if not name.endswith(".fri"):
        continue
    b = open(os.path.join(d, name), "rb").read()
    assert len(b) >= 64 and b[:8] == b"FRECINC\0", f"{name}: no incident header"
    (hsize, ver, _, compat, incompat, meta_len, meta_crc, off, created, length, body_crc,
     hcrc) = struct.unpack("<IHHIIIIQQQII", b[8:64])
    assert zlib.crc32(b[:60]) == hcrc, f"{name}: header crc"
    assert compat & 1, f"{name}: not sealed"
    assert length == len(b), f"{name}: length {length}, file {len(b)} bytes"
    assert zlib.crc32(b[64:64 + meta_len]) == meta_crc, f"{name}: metadata crc"
    assert zlib.crc32(b[off:length]) == body_crc, f"{name}: chunk area does not match its crc"
    n += 1
print(n)
PY
}

spare_state() { "$FRCTL" --store "$T/store" status --json | jq -r .triggers.spare.state; }
wait_log() { # wait_log TEXT: until the daemon logged it (5 s)
	for _ in $(seq 50); do
		grep -qF -- "$1" "$T/daemon.log" && return 0
		sleep 0.1
	done
	fail "the daemon did not log: $1"
}

# prints the incident files the daemon reported durable that are gone
reported_missing() {
	{ grep -oE '(captured: |, is now )[^ ,]*\.fri' "$T/daemon.log" || true; } |
		sed -E 's/^(captured: |, is now )//' | sort -u | while read -r path; do
			[ -f "$path" ] || echo "$path"
		done
}

readable() { # every listed incident dumps
	local id
	for id in $("$FRCTL" --store "$T/store" incidents --json | jq -r '.[].id'); do
		"$FRCTL" --store "$T/store" dump --incident "$id" --format json >/dev/null ||
			fail "incident $id does not dump"
	done
}

# 1. kill -9 while incidents are being written
used=0
for i in $(seq "$KILLS"); do
	start_daemon "$T/fr.conf"
	(
		while :; do
			"$FRCTL" --store "$T/store" freeze --reason "crash $i" >/dev/null 2>&1 || true
			sleep 0.0$((RANDOM % 5 + 1))
		done
	) &
	LOOP=$!
	sleep "$((RANDOM % 2)).$((RANDOM % 10))$((RANDOM % 10))"
	u=$("$FRCTL" --store "$T/store" status --json 2>/dev/null | jq '.triggers.spare.used // 0' || echo 0)
	used=$((used + ${u:-0}))
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null || true
	DPID=
	kill "$LOOP"
	wait "$LOOP" 2>/dev/null || true
	n=$(check_whole) || fail "after kill $i, an incident file is not whole"
	missing=$(reported_missing)
	[ -z "$missing" ] || fail "after kill $i, incidents reported durable are gone: $missing"
done
[ "$used" -gt 0 ] || fail "no incident was written over the spare in $KILLS runs (status: triggers.spare.used)"
start_daemon "$T/fr.conf"
stop_daemon
n=$(check_whole) || fail "after the last start, an incident file is not whole"
[ "$n" -ge "$KILLS" ] || fail "only $n incidents after $KILLS runs of freezes"
missing=$(reported_missing)
[ -z "$missing" ] || fail "after the last start, incidents reported durable are gone: $missing"
nrep=$(grep -cE 'captured: |durable in the spare file when' "$T/daemon.log" || true)
readable
[ ! -e "$INC/.spare" ] || python3 - "$INC/.spare" <<'PY' || fail "the spare left at exit holds data"
import sys
assert not any(open(sys.argv[1], "rb").read()), "not zeros"
PY
ok "$KILLS kills while writing incidents: all $n incident files whole and readable, all $nrep reported durable there, $used written over the spare"

# 2. durable in the spare, not yet renamed: named at the next start
ID=$(ls "$INC" | grep '\.fri$' | tail -1)
ID=${ID%.fri}
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/before.json"
cp "$INC/$ID.fri" "$INC/.spare"
truncate -s $(($(stat -c %s "$INC/.spare") + 65536)) "$INC/.spare" # the spare's zero tail
rm "$INC/$ID.fri"
start_daemon "$T/fr.conf"
[ -f "$INC/$ID.fri" ] || fail "the incident in the spare was not named $ID.fri at start"
grep -q "Incident $ID, durable in the spare file" "$T/daemon.log" || fail "the recovery was not logged"
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/after.json"
cmp -s "$T/before.json" "$T/after.json" || fail "incident $ID reads differently after its recovery from the spare"
stop_daemon
check_whole >/dev/null || fail "the recovered incident is not whole"
ok "an incident durable in the spare gets its name at the next start, unchanged"

# 3. a torn spare: never named
ID2=$(ls "$INC" | grep '\.fri$' | sed -n 1p) # reads all: no SIGPIPE under pipefail
ID2=${ID2%.fri}
cp "$INC/$ID2.fri" "$INC/.spare"
rm "$INC/$ID2.fri"
size=$(stat -c %s "$INC/.spare")
# the last 4 KiB (half of a smaller incident) never reached the disk
tear=$((size > 8192 ? 4096 : size / 2))
dd if=/dev/zero of="$INC/.spare" bs=1 seek=$((size - tear)) count=$tear conv=notrunc status=none
start_daemon "$T/fr.conf"
stop_daemon
[ ! -e "$INC/$ID2.fri" ] || fail "a torn spare was given the name $ID2.fri"
check_whole >/dev/null || fail "an incident file is not whole"
ok "a torn spare is removed, not named"

# 4. durable in the spare while ID.fri exists: renamed to a free name,
# ID-N.fri (N from 2), not lost
ID=$(ls "$INC" | grep '\.fri$' | tail -1)
ID=${ID%.fri}
ls "$INC" >"$T/names.before"
cp "$INC/$ID.fri" "$INC/.spare"
truncate -s $(($(stat -c %s "$INC/.spare") + 65536)) "$INC/.spare"
start_daemon "$T/fr.conf"
stop_daemon
NEW=$(ls "$INC" | comm -13 "$T/names.before" -)
[[ "$NEW" =~ ^$ID-[0-9]+\.fri$ ]] || fail "a durable spare whose name $ID.fri was taken became '$NEW', not $ID-N.fri"
cmp -s "$INC/$ID.fri" "$INC/$NEW" || fail "$NEW is not the incident the spare held"
grep -q "Incident $ID, durable in the spare file when the daemon stopped, is now $INC/$NEW (its own name was taken)" \
	"$T/daemon.log" || fail "the rename to $NEW was not logged"
"$FRCTL" --store "$T/store" dump --incident "${NEW%.fri}" --format json >/dev/null || fail "${NEW%.fri} does not dump"
rm "$INC/$NEW"
ok "a durable spare whose name is taken becomes $NEW, logged"

# 5. a spare that cannot be opened is kept (and incidents still written)
rm -f "$INC/.spare" # the spare left at exit
mkdir "$INC/.spare"
start_daemon "$T/fr.conf"
id=$("$FRCTL" --store "$T/store" freeze --reason kept | awk '/^incident/ {print $2}')
wait_log "Incident $id captured: $INC/$id.fri,"
stop_daemon
[ -d "$INC/.spare" ] || fail "a spare that could not be opened was removed"
grep -q "Cannot open the spare incident file $INC/.spare: Is a directory; kept there" "$T/daemon.log" ||
	fail "keeping the spare was not logged"
[ "$(grep -c "Cannot open the spare incident file" "$T/daemon.log")" -eq 1 ] ||
	fail "keeping the spare was logged more than once"
[ -f "$INC/$id.fri" ] || fail "no incident written while the spare was kept"
rmdir "$INC/.spare"
ok "a spare that cannot be opened is kept and logged once; incidents are still written"

# 6. the seal's length, for readers: a tail after it is ignored, a file
# shorter than it is truncated (one line, exit 1), in the store's list too
ID=$(ls "$INC" | grep '\.fri$' | tail -1)
ID=${ID%.fri}
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/whole.json"
cp "$INC/$ID.fri" "$T/tail.fri"
truncate -s $(($(stat -c %s "$T/tail.fri") + 65536)) "$T/tail.fri"
"$FRCTL" dump --input "$T/tail.fri" --format json >"$T/tail.json" 2>"$T/tail.err" ||
	fail "an incident followed by zeros does not dump: $(cat "$T/tail.err")"
[ ! -s "$T/tail.err" ] && cmp -s "$T/whole.json" "$T/tail.json" ||
	fail "an incident followed by zeros reads differently: $(head -3 "$T/tail.err")"
head -c $(($(stat -c %s "$INC/$ID.fri") - 100)) "$INC/$ID.fri" >"$INC/$ID-cut.fri"
for v in "dump --incident $ID-cut --format json" "report --incident $ID-cut" "dump --input $INC/$ID-cut.fri"; do
	rc=0
	# shellcheck disable=SC2086
	"$FRCTL" --store "$T/store" $v >/dev/null 2>"$T/cut.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "frctl $v on a truncated incident exited $rc, not 1"
	[ "$(wc -l <"$T/cut.err")" -eq 1 ] && grep -q "$ID-cut.fri is truncated: the file is shorter than the length sealed in its header" "$T/cut.err" ||
		fail "frctl $v on a truncated incident: $(cat "$T/cut.err")"
done
"$FRCTL" --store "$T/store" incidents --json | jq -e --arg id "$ID-cut" 'any(.[]; .id == $id and .error == "truncated")' >/dev/null ||
	fail "frctl incidents does not list $ID-cut as truncated"
rm "$INC/$ID-cut.fri"
ok "a sealed incident is read up to its length; one cut short is reported as truncated in one line"

# 7. the rename fails: the incident stays durable in the spare
cat >"$T/action.sh" <<ACTION
#!/bin/sh
printf '%s\n' "\$1" >>"$T/action.paths"
cp "\$1" "$T/action-copy.\$(wc -l <"$T/action.paths").fri"
ACTION
chmod +x "$T/action.sh"
cat >"$T/fr7.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "2s"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "0s";
                         cooldown = "0s"; max_per_hour = 3600; exec = [ "$T/action.sh" ]; } ); };
CONF
trap 'chattr -i "$INC" 2>/dev/null || true; cleanup' EXIT
start_daemon "$T/fr7.conf"
for _ in $(seq 50); do [ "$(spare_state)" = ready ] && break; sleep 0.1; done
[ "$(spare_state)" = ready ] || fail "no spare file ready: $(spare_state)"
# early in a second, so that the next freeze falls in the same one
while [ "$(date +%N)" -gt 200000000 ]; do sleep 0.02; done
chattr +i "$INC"
id1=$("$FRCTL" --store "$T/store" freeze | awk '/^incident/ {print $2}')
wait_log "Incident $id1 is durable in $INC/.spare but cannot be renamed: Operation not permitted"
id2=$("$FRCTL" --store "$T/store" freeze | awk '/^incident/ {print $2}')
[ "$id2" != "$id1" ] || fail "a second incident got the id $id1 of the one in the spare"
same=""
[ "${id1%%-*}" = "${id2%%-*}" ] && same=" in the same second"
wait_log "Failed to write incident $id2: Operation not permitted"
wait_log "Incident $id1 captured: $INC/.spare,"
"$FRCTL" --store "$T/store" status --json >"$T/s7.json"
jq -e '.triggers | .not_renamed == 1 and .failed == 1 and .spare.state == "stranded"' "$T/s7.json" >/dev/null ||
	fail "status after a failed rename: $(jq -c .triggers "$T/s7.json")"
"$FRCTL" --store "$T/store" status | grep -q "incidents: .* 1 failed, .*1 not renamed; spare file stranded" ||
	fail "status text after a failed rename: $("$FRCTL" --store "$T/store" status | grep incidents)"
for _ in $(seq 50); do [ -s "$T/action-copy.1.fri" ] && break; sleep 0.1; done
[ "$(head -1 "$T/action.paths")" = "$INC/.spare" ] || fail "the action got $(head -1 "$T/action.paths"), not $INC/.spare"
"$FRCTL" dump --input "$T/action-copy.1.fri" --format json >/dev/null || fail "the action's copy of the spare does not dump"
chattr -i "$INC"
id3=$("$FRCTL" --store "$T/store" freeze | awk '/^incident/ {print $2}')
wait_log "Incident $id1, durable in the spare file since its rename failed, is now $INC/$id1.fri."
wait_log "Incident $id3 captured: $INC/$id3.fri,"
for _ in $(seq 50); do [ "$(spare_state)" = ready ] && break; sleep 0.1; done
[ "$(spare_state)" = ready ] || fail "no spare file made again after the rename: $(spare_state)"
stop_daemon
cmp -s "$T/action-copy.1.fri" "$INC/$id1.fri" || fail "$id1.fri is not what was durable in the spare"
check_whole >/dev/null || fail "an incident file is not whole after the failed rename"
ok "a failed rename: $id1 durable in the spare, announced, action run, counted; $id2$same got another id; named at the next incident"

# 8. stopping, and the spare left at exit
rm -f "$INC/.spare"
start_daemon "$T/fr.conf"
for _ in $(seq 50); do [ "$(spare_state)" = ready ] && break; sleep 0.1; done
"$FRCTL" --store "$T/store" freeze --reason "at shutdown" >/dev/null
stop_daemon # before the window is complete: written by the shutdown
grep -q 'Incident .* captured: .*, 1 triggers' "$T/daemon.log" || fail "no incident written at shutdown"
[ ! -e "$INC/.spare" ] || fail "a new spare was made while the daemon stopped"
start_daemon "$T/fr.conf"
for _ in $(seq 50); do [ "$(spare_state)" = ready ] && break; sleep 0.1; done
stop_daemon
[ -f "$INC/.spare" ] || fail "no spare left at exit"
ino=$(stat -c "%i %w" "$INC/.spare") # inode and birth: a new file is born anew
size=$(stat -c %s "$INC/.spare")
# what an incident written ahead leaves: chunks after a zero header
head -c 200000 /dev/urandom | dd of="$INC/.spare" bs=4096 seek=4 conv=notrunc status=none
start_daemon "$T/fr.conf"
for _ in $(seq 50); do [ "$(spare_state)" = ready ] && break; sleep 0.1; done
[ "$(spare_state)" = ready ] || fail "no spare made at start over the old one: $(spare_state)"
[ "$(stat -c "%i %w" "$INC/.spare")" = "$ino" ] && [ "$(stat -c %s "$INC/.spare")" = "$size" ] ||
	fail "the spare left at exit was not made again over its own file"
python3 - "$INC/.spare" <<'PY' || fail "the spare made again still holds old data"
import sys
assert not any(open(sys.argv[1], "rb").read()), "not zeros"
PY
stop_daemon
ok "no spare made while stopping; the spare left at exit is made again in place, all zeros"
