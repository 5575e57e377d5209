#!/bin/bash
# The sockets' directory (issue 42): on SIGHUP the daemon gives
# annotate.sock to control.group; it did so by path (chown, chmod), so a
# symbolic link put in the socket's place made root chown and chmod its
# target.  Now:
#  - a socket directory owned by another user (nobody), or writable by
#    others and not sticky, is refused at start: one error line, exit 1;
#  - a sticky one of root's (as /tmp) is accepted, and nobody cannot
#    replace the socket in it;
#  - a symbolic link in annotate.sock's place (put there by the
#    directory's owner) is left alone on SIGHUP: its target untouched.
# Usage: test-socket-dir.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

chmod 0755 "$T"
GROUP=frsock$$
make_group "$GROUP"
cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
control = { group = "$GROUP"; };
sources = { sample = { enabled = false; }; };
CONF
# the file the links point at: root's, 0644
echo "root's file" >"$T/target"
chmod 0644 "$T/target"
TARGET_STAT="644 root root"

# run_on DIR: the daemon with its sockets in DIR; 0 once it answers,
# 1 if it exited first
run_on() {
	: >"$T/daemon.log"
	"$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" --socket "$1/control.sock" >"$T/daemon.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do
		"$FRCTL" --socket "$1/control.sock" status >/dev/null 2>&1 && return 0
		if ! kill -0 "$DPID" 2>/dev/null; then
			wait "$DPID" 2>/dev/null || true
			DPID=
			return 1
		fi
		sleep 0.1
	done
	fail "flightrecd neither answered nor exited within 10 s"
}
# reload: SIGHUP, until the daemon says it reloaded
reload() {
	local n
	n=$(grep -c "Configuration reloaded" "$T/daemon.log" || true)
	kill -HUP "$DPID"
	for _ in $(seq 100); do
		[ "$(grep -c "Configuration reloaded" "$T/daemon.log" || true)" -gt "$n" ] && return 0
		sleep 0.1
	done
	fail "no reload after SIGHUP"
}
# swap_for_link DIR WHO: WHO (as_nobody or env) puts a link to the target
# in annotate.sock's place
swap_for_link() {
	$2 rm -f "$1/annotate.sock" && $2 ln -s "$T/target" "$1/annotate.sock"
}

# 1. a directory of nobody's
mkdir -m 0755 "$T/nobody"
chown 65534:65534 "$T/nobody"
if run_on "$T/nobody"; then
	# the attack it allowed: the directory's owner swaps the socket for a link
	swap_for_link "$T/nobody" as_nobody || fail "nobody could not swap the socket"
	reload
	fail "a socket directory owned by nobody was accepted; after SIGHUP the link's target is $(stat -c '%a %U %G' "$T/target") (was $TARGET_STAT)"
fi
grep -q "^<3>Refusing the socket directory: $T/nobody is owned by uid 65534" "$T/daemon.log" ||
	fail "no error line for nobody's socket directory: $(cat "$T/daemon.log")"
[ "$(grep -c '^<[0-3]>' "$T/daemon.log")" -eq 1 ] || fail "not one error line: $(cat "$T/daemon.log")"
[ -z "$(ls -A "$T/nobody")" ] || fail "sockets made in nobody's directory: $(ls -A "$T/nobody")"
ok "nobody's socket directory refused: $(grep '^<3>' "$T/daemon.log")"

# 2. root's, writable by all, not sticky
mkdir -m 0777 "$T/open"
run_on "$T/open" && fail "a socket directory writable by all (not sticky) was accepted"
grep -q "^<3>Refusing the socket directory: $T/open is writable by its group or others and not sticky (mode 0777)" \
	"$T/daemon.log" || fail "no error line for the open socket directory: $(cat "$T/daemon.log")"
ok "an open, not sticky, socket directory refused"

# 3. root's, sticky (as /tmp): accepted; nobody cannot replace the socket
mkdir -m 1777 "$T/sticky"
run_on "$T/sticky" || fail "a sticky socket directory was refused: $(cat "$T/daemon.log")"
swap_for_link "$T/sticky" as_nobody 2>/dev/null && fail "nobody replaced the socket in a sticky directory"
reload
[ "$(stat -c '%F %a %U %G' "$T/sticky/annotate.sock")" = "socket 660 root $GROUP" ] ||
	fail "annotate.sock after SIGHUP: $(stat -c '%F %a %U %G' "$T/sticky/annotate.sock")"
ok "a sticky socket directory: accepted, the socket stays root's ($(stat -c '%a %U %G' "$T/sticky/annotate.sock"))"

# 4. the socket swapped for a link by the directory's owner (root here,
# as the one who may): SIGHUP leaves the target alone, says so
swap_for_link "$T/sticky" env
reload
[ "$(stat -c '%a %U %G' "$T/target")" = "$TARGET_STAT" ] ||
	fail "SIGHUP changed the link's target: $(stat -c '%a %U %G' "$T/target"), was $TARGET_STAT"
grep -q "Failed to give the annotation socket $T/sticky/annotate.sock to group '$GROUP'" "$T/daemon.log" ||
	fail "no warning for the swapped socket: $(tail -3 "$T/daemon.log")"
ok "a link in annotate.sock's place: target untouched ($TARGET_STAT): $(grep 'Failed to give the annotation' "$T/daemon.log")"
stop_daemon
echo "socket-dir: all checks passed"
