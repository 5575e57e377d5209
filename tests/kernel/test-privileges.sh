#!/bin/bash
# Who may do what, with a real daemon and real unprivileged users (setpriv):
#  - freeze, mark and annotations from a user who is not root and not in
#    control.group are refused with "permission denied" (frctl: one line,
#    exit 4), and nothing happens: no incident, no record, no trigger;
#  - root, a member by supplementary group and a member by primary group
#    succeed;
#  - status stays open to anyone who can reach the socket;
#  - a control.group that does not exist (after a reload) means root only;
#  - the store and incidents are 0750/0640 whatever the umask, also when
#    the store directory was made world-readable beforehand; the
#    unprivileged user (and the group member) cannot read them;
#  - oversized marks are refused with a clear error, oversized annotations
#    are cut, marked " [cut]" and counted.
# Usage: test-privileges.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

GROUP=frpriv$$
make_group "$GROUP"
GID=$(getent group "$GROUP" | cut -d: -f3)

# the unprivileged users must reach the socket and the config: the
# temporary dir (mktemp: 0700) is opened for traversal, the socket lives in
# a 0755 runtime dir of its own, as /run/flightrec is
chmod 0755 "$T"
mkdir -m 0755 "$T/run"
SOCK="$T/run/control.sock"
# a store directory made world-readable beforehand: the daemon must close it
mkdir -m 0755 "$T/store"

write_conf() {
	cat >"$T/fr.conf" <<EOF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
recorder = { chunk_age = "200ms"; };
control = { group = "$1"; };
sources = { sample = { enabled = false; }; };
triggers = { rules = (
  { name = "manual"; condition = "manual"; before = "2s"; after = "1s"; }
); };
EOF
	chmod 0644 "$T/fr.conf"
}
write_conf "$GROUP"

# umask 0: modes must not depend on it
(umask 000 && exec "$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" --socket "$SOCK") >>"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	"$FRCTL" --config "$T/fr.conf" --socket "$SOCK" status >/dev/null 2>&1 && break
	kill -0 "$DPID" 2>/dev/null || fail "flightrecd exited during start"
	sleep 0.1
done

# as the unprivileged user, a supplementary member, a primary member
as_member() { setpriv --reuid=$NOBODY --regid=$NOBODY --groups="$GID" "$@"; }
as_primary() { setpriv --reuid=$NOBODY --regid="$GID" --clear-groups "$@"; }
# a member with many groups, the one that counts last: more than the
# first SO_PEERGROUPS buffer holds, and a long Groups: line in /proc
MANY=$(seq -s, 70000 71099),$GID
as_many() { setpriv --reuid=$NOBODY --regid=$NOBODY --groups="$MANY" "$@"; }
FR=("$FRCTL" --config "$T/fr.conf" --socket "$SOCK")

# expect_denied WHAT CMD...: exit 4, one line saying "permission denied"
expect_denied() {
	local what=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 4 ] || fail "$what: exit $rc, not 4 (stdout: $(cat "$T/out"), stderr: $(cat "$T/err"))"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$what: not one line: $(cat "$T/err")"
	grep -q "permission denied" "$T/err" || fail "$what: no 'permission denied': $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "$what: printed on stdout: $(cat "$T/out")"
	ok "$what: refused, exit 4: $(cat "$T/err")"
}

grep -q "accepted from root and group '$GROUP' (gid $GID)" "$T/daemon.log" ||
	fail "no start log line naming group $GROUP"

# --- refused: nothing may happen
expect_denied "unprivileged freeze" as_nobody "${FR[@]}" freeze --reason "nobody-freeze-$$"
expect_denied "unprivileged mark" as_nobody "${FR[@]}" mark "nobody-mark-$$"
# a client that skips frctl gets the same answer from the daemon itself
reply=$(as_nobody /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1]); s.send(b"{\"verb\": \"freeze\", \"reason\": \"nobody-raw-" + sys.argv[2].encode() + b"\"}")
print(s.recv(65536).decode())' "$SOCK" "$$")
echo "$reply" | jq -e '.denied == true and (.error | startswith("permission denied"))' >/dev/null ||
	fail "raw freeze request as nobody: $reply"
ok "raw freeze request as nobody: $reply"
# annotate.sock is root's and the group's (0660): the kernel refuses the
# unprivileged sender's datagram, and the sender sees the error
[ "$(stat -c '%a %U %G' "$T/run/annotate.sock")" = "660 root $GROUP" ] ||
	fail "annotate.sock is $(stat -c '%a %U %G' "$T/run/annotate.sock"), not 660 root $GROUP"
ANNOTATE='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendto(sys.argv[2].encode(), sys.argv[1])
except PermissionError as e:
    print("refused:", e); sys.exit(4)'
rc=0
as_nobody /usr/bin/python3 -c "$ANNOTATE" "$T/run/annotate.sock" "nobody-annotation-$$" >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "annotation as nobody: exit $rc, not refused by the kernel: $(cat "$T/out")"
ok "annotation as nobody: $(cat "$T/out") (annotate.sock: 660 root $GROUP)"

# --- status is open to anyone
as_nobody "$FRCTL" --config "$T/fr.conf" --socket "$SOCK" status --json >"$T/status.json" ||
	fail "status as nobody failed"
jq -e '.running == true and .control.denied == 3' "$T/status.json" >/dev/null ||
	fail "status as nobody: running, 3 requests refused expected: $(jq -c '{running, control, annotations}' "$T/status.json")"
ok "status as nobody: $(jq -c '{running, control, annotations}' "$T/status.json")"
[ "$(grep -c 'Refused freeze from pid' "$T/daemon.log")" -eq 1 ] ||
	fail "expected one refusal log line (the first), got: $(grep Refused "$T/daemon.log")"
ok "the first refusal is logged, the rest counted"

# --- allowed: root, a supplementary member, a primary member
"${FR[@]}" mark "root-mark-$$" || fail "mark as root"
as_member "${FR[@]}" mark "member-mark-$$" || fail "mark as a supplementary member of $GROUP"
as_primary "${FR[@]}" mark "primary-mark-$$" || fail "mark as a primary member of $GROUP"
as_many "${FR[@]}" mark "many-mark-$$" || fail "mark as a member of $GROUP among 1100 groups"
# senders that exit at once: the kernel checked their groups as they sent
as_member /usr/bin/python3 -c "$ANNOTATE" "$T/run/annotate.sock" "member-annotation-$$" ||
	fail "annotation as a supplementary member of $GROUP"
as_many /usr/bin/python3 -c "$ANNOTATE" "$T/run/annotate.sock" "many-annotation-$$" ||
	fail "annotation as a member of $GROUP among 1100 groups"
ok "root and members of $GROUP (supplementary, primary, last of 1100 groups) may mark and annotate"

wait_incidents() {
	for _ in $(seq 100); do
		[ "$(find "$T/store/incidents" -name '*.fri' | wc -l)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "expected $1 incident files, have: $(ls "$T/store/incidents")"
}
"${FR[@]}" freeze --reason "root-freeze-$$" >/dev/null || fail "freeze as root"
wait_incidents 1
as_member "${FR[@]}" freeze --reason "member-freeze-$$" >/dev/null || fail "freeze as a member of $GROUP"
wait_incidents 2
ok "root and a member of $GROUP froze: 2 incidents"

wait_for_record ".type == \"mark\" and .text == \"many-annotation-$$\""
sleep 0.5
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"
for t in root-mark member-mark primary-mark many-mark member-annotation many-annotation; do
	jq -e -s "any(.[]; .type == \"mark\" and .text == \"$t-$$\")" "$T/dump.json" >/dev/null ||
		fail "no mark record \"$t-$$\""
done
# (the exec records of the refused commands name them in their argv)
n=$(jq -s '[.[] | select(.type != "exec" and (tostring | contains("nobody-")))] | length' "$T/dump.json")
[ "$n" -eq 0 ] || fail "$n records from the refused requests: $(grep nobody- "$T/dump.json" | grep -v '"type":"exec"')"
n=$(jq -s '[.[] | select(.type == "trigger")] | length' "$T/dump.json")
[ "$n" -eq 2 ] || fail "expected 2 trigger records (root, member), got $n"
n=$(find "$T/store/incidents" -name '*.fri' | wc -l)
[ "$n" -eq 2 ] || fail "expected 2 incident files, got $n"
"${FR[@]}" status --json >"$T/status.json"
jq -e '.triggers.rules.manual.fired == 2' "$T/status.json" >/dev/null ||
	fail "manual rule: $(jq -c .triggers.rules.manual "$T/status.json")"
ok "the refused requests left nothing: no record, no trigger, no incident (fired 2, files 2)"

# --- oversized marks and annotations
rc=0
"${FR[@]}" mark "$(head -c 1025 /dev/zero | tr '\0' x)" 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "1 to 1024 bytes" "$T/err" || fail "1025-byte mark: exit $rc: $(cat "$T/err")"
ok "frctl mark of 1025 bytes: exit 2: $(cat "$T/err")"
reply=$(/usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1]); s.send(json.dumps({"verb": "mark", "text": "long-raw-" + "y" * 2000}).encode())
print(s.recv(65536).decode())' "$SOCK")
[ "$(echo "$reply" | jq -r .error)" = "mark text is longer than 1024 bytes" ] || fail "2 KB raw mark: $reply"
ok "a 2 KB mark sent around frctl: $reply"
/usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(("long-annotation-" + "z" * 5000).encode(), sys.argv[1])' \
	"$T/run/annotate.sock"
wait_for_record '.type == "mark" and (.text | startswith("long-annotation-"))'
"$FRCTL" --store "$T/store" dump --type mark --format json >"$T/marks.json"
jq -e -s 'any(.[]; (.text | startswith("long-annotation-")) and (.text | length) == 1024 and (.text | endswith(" [cut]")))' \
	"$T/marks.json" >/dev/null || fail "5000-byte annotation not cut to 1024 bytes ending ' [cut]'"
n=$(grep -c "long-raw-" "$T/marks.json" || true)
[ "$n" -eq 0 ] || fail "the refused 2 KB mark was recorded"
"${FR[@]}" status --json >"$T/status.json"
jq -e '.annotations.cut == 1 and .annotations.received == 3' "$T/status.json" >/dev/null ||
	fail "annotations: $(jq -c .annotations "$T/status.json")"
grep -q "longer than 1024 bytes: cut; 1 cut so far" "$T/daemon.log" || fail "no log line for the cut annotation"
ok "a 5000-byte annotation: cut to 1024 bytes ending ' [cut]', counted: $(jq -c .annotations "$T/status.json")"

# --- modes: 0750 directories, 0640 files, whatever the umask was
[ "$(stat -c %a "$T/store")" = 750 ] || fail "store dir is $(stat -c %a "$T/store"), not 750"
bad=$(find "$T/store" \( -type d ! -perm 0750 \) -o \( -type f ! -perm 0640 \) -printf '%m %p\n')
[ -z "$bad" ] || fail "wrong modes in the store: $bad"
ok "store and incidents: directories 0750, files 0640 ($(find "$T/store" -type f | wc -l) files)"
INC=$(find "$T/store/incidents" -name '*.fri' | head -1)
for who in as_nobody as_member; do
	rc=0
	$who "$FRCTL" --store "$T/store" dump --last 5m >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "permission denied" "$T/err" && [ ! -s "$T/out" ] ||
		fail "dump --store as $who: exit $rc: $(cat "$T/err") $(head -c 200 "$T/out")"
	ok "frctl dump --store $who: exit $rc: $(cat "$T/err")"
	rc=0
	$who "$FRCTL" dump --input "$INC" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "Permission denied" "$T/err" && [ ! -s "$T/out" ] ||
		fail "dump --input INCIDENT as $who: exit $rc: $(cat "$T/err") $(head -c 200 "$T/out")"
	ok "frctl dump --input INCIDENT $who: exit $rc: $(cat "$T/err")"
done
# the incident file alone, as if its directory were reachable
cp -p "$INC" "$T/run/copy.fri"
rc=0
as_nobody cat "$T/run/copy.fri" >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "an incident file (mode $(stat -c %a "$T/run/copy.fri")) is readable by nobody"
rm -f "$T/run/copy.fri"
ok "an incident file itself is not readable by others"

# --- a group that does not exist: root only, said once
write_conf "nosuchgroup$$"
kill -HUP "$DPID"
for _ in $(seq 100); do
	grep -q "Configuration reloaded" "$T/daemon.log" && break
	sleep 0.1
done
grep -q "Group 'nosuchgroup$$' (control.group) does not exist: only root" "$T/daemon.log" ||
	fail "no log line for the missing group"
expect_denied "member mark after the group went away" as_member "${FR[@]}" mark "member-after-$$"
grep -q "needs root (group 'nosuchgroup$$' does not exist)" "$T/err" || fail "reply does not say the group is missing"
[ "$(stat -c '%a %U %G' "$T/run/annotate.sock")" = "600 root root" ] ||
	fail "annotate.sock after the group went away: $(stat -c '%a %U %G' "$T/run/annotate.sock"), not 600 root root"
rc=0
as_member /usr/bin/python3 -c "$ANNOTATE" "$T/run/annotate.sock" "member-after-$$" >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "annotation as a former member: exit $rc, not refused: $(cat "$T/out")"
"${FR[@]}" mark "root-after-$$" || fail "mark as root with no group"
ok "no such group: root only (annotate.sock 600 root root)"

stop_daemon
echo "privileges: all checks passed"
