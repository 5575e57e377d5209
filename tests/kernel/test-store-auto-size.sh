#!/bin/bash
# store.size = "auto", the default: 2 GiB, at most 10 % of the store's
# file system, at least what the segments need.  The store is a tmpfs of
# each size in turn (a tmpfs's size is only its limit: 64G costs nothing):
#   - 64 GiB: the bound is 2 GiB, and status says it is the default's;
#   - 200 MiB: a tenth of it, 20 MiB; frctl status with the daemon stopped
#     works out the same bound from the configuration;
#   - 20 MiB, 4 segments of 16K chunks: 2 MiB, and an exec storm of five
#     times that never takes du past it, the newest record kept;
#   - 32 MiB, 4 segments of 256K chunks: a tenth (3.2 MiB) is less than 4
#     segments of 4 chunks: the bound is that smallest store;
#   - an explicit size is used as it is, past a tenth of the file system.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"

# the daemon holds files on the mount: stop it first, or umount fails
# (busy) and rm -rf would reach into the still-mounted tmpfs
MOUNTED=
unmount_cleanup() {
	end_daemon
	[ -z "$MOUNTED" ] || umount "$T/store" || echo "warning: could not unmount $T/store" >&2
	cleanup
}
trap unmount_cleanup EXIT

# store_fs SIZE: a fresh tmpfs of SIZE as the store (mode 0750: the daemon
# refuses a store others may write to)
store_fs() {
	[ -z "$MOUNTED" ] || { umount "$T/store"; MOUNTED=; }
	mkdir -p "$T/store"
	mount -t tmpfs -o "size=$1,mode=0750" tmpfs "$T/store" || fail "cannot mount a $1 tmpfs"
	MOUNTED=1
}
bound() { "$FRCTL" --store "$T/store" status --json | jq -r "$1"; }
MiB=$((1024 * 1024))

# (sched only: a quiet recording, the bound is what is looked at)
cat >"$T/auto.conf" <<CONF
store = { sync_interval = "200ms"; };
sources = { sample = { enabled = false; }; };
metrics = { enabled = false; };
CONF

store_fs 64G
start_daemon "$T/auto.conf"
[ "$(bound .store.bytes_bound)" = $((2048 * MiB)) ] || fail "bound $(bound .store.bytes_bound) on a 64G file system, not 2 GiB"
[ "$(bound .store.bound_auto)" = true ] || fail "status does not say the bound is store.size \"auto\"'s"
grep -q 'Store bound 2.0G: store.size "auto" is 2G, at most 10% of the 64.0G file system' "$T/daemon.log" ||
	fail "the daemon did not log the bound it chose: $(grep -i bound "$T/daemon.log")"
stop_daemon
ok "64 GiB file system: the bound is 2 GiB, logged and in status"

store_fs 200M
start_daemon "$T/auto.conf"
want=$((200 * MiB / 100 * 10))
[ "$(bound .store.bytes_bound)" = "$want" ] || fail "bound $(bound .store.bytes_bound) on a 200M file system, not $want"
stop_daemon
# the daemon stopped: frctl works the bound out from the configuration
got=$("$FRCTL" --config "$T/auto.conf" --store "$T/store" status --json | jq .store.bytes_bound) || true
[ "$got" = "$want" ] || fail "frctl status without the daemon says bound $got, not $want"
ok "200 MiB file system: the bound is a tenth, $want bytes, from the daemon and from frctl alone"

cat >"$T/small.conf" <<CONF
store = { segments = 4; sync_interval = "100ms"; };
recorder = { chunk_size = "16K"; };
sources = { sample = { enabled = false; }; };
metrics = { enabled = false; };
CONF
store_fs 20M
start_daemon "$T/small.conf"
want=$((20 * MiB / 100 * 10))
[ "$(bound .store.bytes_bound)" = "$want" ] || fail "bound $(bound .store.bytes_bound) on a 20M file system, not $want"
storm_over "$want" "$STORM"
max_du=$MAX_DU written=$WRITTEN
[ "$max_du" -le "$want" ] || fail "du $max_du exceeds the auto bound $want"
ok "20 MiB file system: $written bytes written into the auto bound of $want; du peaked at $max_du; newest kept"

cat >"$T/floor.conf" <<CONF
store = { segments = 4; };
sources = { sample = { enabled = false; }; };
metrics = { enabled = false; };
CONF
store_fs 32M
start_daemon "$T/floor.conf"
got=$(bound .store.bytes_bound)
# 4 segments of a header and 4 chunks of 256K + 4K each, in whole pages
least=$((4 * 4 * (256 + 4) * 1024))
[ "$got" -gt $((32 * MiB / 10)) ] && [ "$got" -ge "$least" ] && [ "$got" -le $((least + 4 * 8192)) ] ||
	fail "bound $got on a 32M file system with 4 segments of 256K chunks, not the least they need (~$least)"
stop_daemon
ok "32 MiB file system, 4 segments of 256K chunks: the bound is the smallest store they allow, $got bytes"

cat >"$T/set.conf" <<CONF
store = { size = "64M"; };
sources = { sample = { enabled = false; }; };
metrics = { enabled = false; };
CONF
store_fs 200M
start_daemon "$T/set.conf"
[ "$(bound .store.bytes_bound)" = $((64 * MiB)) ] || fail "an explicit 64M is bound $(bound .store.bytes_bound)"
[ "$(bound .store.bound_auto)" = false ] || fail "status says an explicit size is \"auto\""
stop_daemon
ok "an explicit size is used as it is (64 MiB on a 200 MiB file system)"
