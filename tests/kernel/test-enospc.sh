#!/bin/bash
# Disk full: the store lives on a 4 MiB tmpfs (less than its configured
# bound) that a filler file has mostly taken; an exec storm of
# incompressible records hits ENOSPC.  flightrecd must survive and keep
# answering, log the failure once, count what it could not write as gaps
# (gap totals = BPF drops + write losses, exactly), and resume writing by
# itself once the filler is removed.
BUILD=$1
STORM=$2
. "$(dirname "$0")/lib.sh"

mkdir "$T/mnt"
mount -t tmpfs -o size=4M tmpfs "$T/mnt"
# the daemon holds files on the mount: stop it first, or umount fails (busy)
# and rm -rf would reach into the still-mounted tmpfs
unmount_cleanup() {
	end_daemon
	umount "$T/mnt" || echo "warning: could not unmount $T/mnt" >&2
	cleanup
}
trap unmount_cleanup EXIT

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
recorder = { chunk_size = "16K"; };
CONF
dd if=/dev/zero of="$T/mnt/filler" bs=1M count=3 status=none

"$FLIGHTRECD" --config "$T/fr.conf" --store "$T/mnt/store" >>"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	"$FRCTL" --store "$T/mnt/store" status >/dev/null 2>&1 && break
	sleep 0.1
done
"$STORM" 4000
sleep 1
kill -0 "$DPID" || fail "flightrecd died on ENOSPC"
"$FRCTL" --store "$T/mnt/store" status --json >"$T/s1.json" || fail "status does not answer while the disk is full"
lost1=$(jq '[.per_cpu[].lost_write] | add' "$T/s1.json")
[ "$lost1" -gt 0 ] || fail "no write losses counted on a full disk: $(jq -c .per_cpu "$T/s1.json")"
n=$(grep -c 'No space left on device' "$T/daemon.log" || true)
[ "$n" -eq 1 ] || fail "expected one ENOSPC log line, got $n: $(cat "$T/daemon.log")"
ok "disk full: daemon alive, $lost1 records counted as lost, logged once"
# far below the spare's 64 MiB of headroom: none made, said once at info
[ "$(jq -r .triggers.spare.state "$T/s1.json")" = low_space ] ||
	fail "spare file state $(jq -c .triggers.spare "$T/s1.json") on a 4 MiB filesystem, not low_space"
[ "$(grep -c '^<6>No spare incident file while the filesystem of .* has .* free' "$T/daemon.log")" -eq 1 ] ||
	fail "the missing spare file was not logged once at info"
ok "no spare file on a nearly full filesystem: status says low_space, logged once"

rm "$T/mnt/filler"
sleep 1
MARKER="after-enospc-$$-$RANDOM"
/bin/true "$MARKER"
for _ in $(seq 100); do
	"$FRCTL" --store "$T/mnt/store" dump --format json 2>/dev/null |
		jq -n -e --arg m "$MARKER" 'any(inputs; .type == "exec" and (.argv | index($m)))' >/dev/null && break
	sleep 0.1
done
"$FRCTL" --store "$T/mnt/store" status --json >"$T/s2.json"
kill -TERM "$DPID"; wait "$DPID" || fail "flightrecd exited non-zero"; DPID=

"$FRCTL" --store "$T/mnt/store" dump --format json >"$T/dump.json"
jq -e -s --arg m "$MARKER" 'any(.[]; .type == "exec" and (.argv | index($m)))' "$T/dump.json" >/dev/null ||
	fail "writing did not resume after space was freed"
grep -q 'Writing to the store resumed' "$T/daemon.log" || fail "no 'resumed' log line"
ok "writing resumed by itself once space returned"

want=$(jq '[.per_cpu[] | .dropped + .lost_write] | add' "$T/s2.json")
got=$(jq -s '[.[] | select(.type == "gap") | .lost] | add // 0' "$T/dump.json")
[ "$got" -eq "$want" ] || fail "gap records say $got lost, the daemon counted $want"
ok "gap records account for all $want lost records"
