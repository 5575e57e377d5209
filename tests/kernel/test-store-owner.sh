#!/bin/bash
# A store directory someone else may write to is refused, not used (issue
# 42): the unprivileged user (nobody) plants, in a store (or one of its
# subdirectories) that is theirs or open to them, a segment that is a
# symbolic link to a root-only file and a segment made 0666 beforehand.
# The daemon must exit non-zero with one error line naming the directory
# and why, write nothing, and leave the link's target untouched.
# Usage: test-store-owner.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

chmod 0755 "$T"
cat >"$T/fr.conf" <<EOF2
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { enabled = false; }; };
EOF2
# a root-only file the planted links point at
printf 'root secret\n' >"$T/secret"
chmod 0600 "$T/secret"
SUM=$(sha256sum <"$T/secret")

# plant DIR: as nobody, 0000.frs -> the secret, 0001.frs made 0666
plant() {
	as_nobody ln -s "$T/secret" "$1/0000.frs" || fail "nobody cannot plant a link in $1"
	as_nobody sh -c "umask 0; : >'$1/0001.frs'" || fail "nobody cannot plant a file in $1"
}

# expect_refused WHAT PATH REASON: the daemon exits non-zero at once, with
# one error line naming PATH and REASON, having written nothing
expect_refused() {
	local what=$1 path=$2 reason=$3 rc=0 before after
	before=$(find "$T/store" -printf '%p %m %u %s\n' | sort)
	: >"$T/daemon.log"
	timeout 6 "$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" >"$T/daemon.log" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$what: flightrecd exit $rc, not refused"
	grep -q "^<3>Refusing the store: $path $reason" "$T/daemon.log" ||
		fail "$what: no error line naming $path ($reason): $(cat "$T/daemon.log")"
	[ "$(grep -c '^<[0-3]>' "$T/daemon.log")" -eq 1 ] || fail "$what: not one error line: $(cat "$T/daemon.log")"
	[ "$(sha256sum <"$T/secret")" = "$SUM" ] || fail "$what: the symbolic link's target was written"
	after=$(find "$T/store" -printf '%p %m %u %s\n' | sort)
	[ "$before" = "$after" ] || fail "$what: the store changed: $(diff <(echo "$before") <(echo "$after"))"
	[ ! -e "$T/store/control.sock" ] || fail "$what: a control socket was made"
	ok "$what: exit $rc: $(grep '^<3>' "$T/daemon.log")"
}

# 1. the user's own store directory
chmod 1777 "$T"
as_nobody mkdir -m 0755 "$T/store" "$T/store/segments"
plant "$T/store/segments"
chmod 0755 "$T"
expect_refused "a store owned by nobody" "$T/store" "is owned by uid 65534"
rm -rf "$T/store"

# 2. root's, but open to everyone (mkdir -m 0777 by an administrator)
mkdir -m 0777 "$T/store" "$T/store/segments"
plant "$T/store/segments"
expect_refused "a store writable by others" "$T/store" "is writable by its group or others (mode 0777)"

# 3. the store closed, segments/ still open
chmod 0750 "$T/store"
expect_refused "segments/ writable by others" "$T/store/segments" "is writable by its group or others (mode 0777)"

# 4. segments/ closed too: the planted segments themselves are refused,
# one at a time (the daemon names the first it finds, in the directory's
# order, which is the file system's)
chmod 0750 "$T/store/segments"
mv "$T/store/segments/0001.frs" "$T/planted-0001.frs"
expect_refused "a planted symbolic link segment" "$T/store/segments/0000.frs" "is not a regular file (a symbolic link)"
rm "$T/store/segments/0000.frs"
mv "$T/planted-0001.frs" "$T/store/segments/0001.frs"
expect_refused "a planted 0666 segment" "$T/store/segments/0001.frs" "is owned by uid 65534"
[ "$(stat -c '%a %U %s' "$T/store/segments/0001.frs")" = "666 nobody 0" ] ||
	fail "the planted 0666 segment was used: $(stat -c '%a %U %s' "$T/store/segments/0001.frs")"
rm "$T/store/segments/0001.frs"

# 5. incidents/ open to others
mkdir -m 0777 "$T/store/incidents"
expect_refused "incidents/ writable by others" "$T/store/incidents" "is writable by its group or others (mode 0777)"

# 6. all closed: accepted
chmod 0750 "$T/store/incidents"
start_daemon "$T/fr.conf"
stop_daemon
[ "$(sha256sum <"$T/secret")" = "$SUM" ] || fail "the secret changed"
ok "the same store, closed to others: accepted"
echo "store-owner: all checks passed"
