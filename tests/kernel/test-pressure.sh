#!/bin/bash
# The pressure condition (issue 44): rules on PSI, fired by real memory
# pressure in a cgroup.  A process rereads a 64 MiB file in a memory
# cgroup of 32 MiB: every read refaults what the last one evicted, and
# the kernel counts the waits as memory stall of the cgroup
# (CG/memory.pressure).
#   a. a rule with a 2 s window is a PSI trigger in the kernel, one with
#      a 12 s window (over the kernel's 10 s) is read every second, and
#      one on a cgroup not there yet waits for it: frctl status says
#      which (.triggers.rules.NAME.watch.mode);
#   b. no rule fires while the cgroup is idle;
#   c. under the pressure both rules of the loaded cgroup fire, and the
#      incident lists the pressure that fired it (type "pressure", the
#      resource, the cgroup, the share stalled); the store has the
#      trigger record; a rule on an idle cgroup next to it never fires.
BUILD=$1
. "$(dirname "$0")/lib.sh"

CG2=$(findmnt -n -o TARGET -t cgroup2 | head -1)
[ -n "$CG2" ] || fail "no cgroup2 mount"
LOADED=/fr-psi-$$
IDLE=/fr-psi-idle-$$
LATER=/fr-psi-later-$$
V1=/sys/fs/cgroup/memory/fr-psi-$$
BIG=
LOAD=
SLEEPER=
teardown() {
	for p in $LOAD $SLEEPER; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	for d in "$CG2$LOADED" "$CG2$IDLE" "$V1"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	[ -z "$BIG" ] || rm -f "$BIG"
	cleanup
}
trap teardown EXIT

mkdir "$CG2$LOADED" "$CG2$IDLE"
if [ -d /sys/fs/cgroup/memory ]; then
	# cgroup v1's memory controller (this machine): the limit there,
	# the stall counted in the cgroup2 group all the same
	mkdir "$V1"
	echo $((32 << 20)) >"$V1/memory.limit_in_bytes"
else
	echo $((32 << 20)) >"$CG2$LOADED/memory.max"
fi
# on disk, not tmpfs: clean pages, which reclaim evicts and reads refault
BIG=$(mktemp /var/tmp/fr-psi-XXXXXX)
dd if=/dev/urandom of="$BIG" bs=1M count=64 conv=fsync status=none
dd if="$BIG" iflag=nocache count=0 status=none # out of the page cache (charged elsewhere)

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; };
triggers = { rules = (
  { name = "psi-kernel"; condition = "pressure"; resource = "memory"; kind = "some";
    threshold = "2%"; over = "2s"; cgroup = "$LOADED"; after = "2s"; },
  { name = "psi-polled"; condition = "pressure"; resource = "memory";
    threshold = "0.5%"; over = "12s"; cgroup = "$LOADED"; after = "2s"; },
  { name = "psi-idle"; condition = "pressure"; threshold = "1%"; over = "2s"; cgroup = "$IDLE"; },
  { name = "psi-later"; condition = "pressure"; threshold = "10%"; cgroup = "$LATER"; }
); };
CONF
"$FLIGHTRECD" --check-config --config "$T/fr.conf" | grep -qx "configuration OK" || fail "the configuration does not check"
start_daemon "$T/fr.conf"

# a. how each rule is watched
rules() { "$FRCTL" --store "$T/store" status --json | jq -c ".triggers.rules$1"; }
[ "$(rules '["psi-kernel"].watch.mode')" = '"kernel"' ] || fail "psi-kernel is not a kernel trigger: $(rules '["psi-kernel"]')"
[ "$(rules '["psi-polled"].watch.mode')" = '"polled"' ] || fail "psi-polled is not polled: $(rules '["psi-polled"]')"
[ "$(rules '["psi-later"].watch | [.mode, .error]')" = '["waiting","No such file or directory"]' ] ||
	fail "psi-later does not wait for its cgroup: $(rules '["psi-later"]')"
ok "watched: 2 s window as a kernel trigger, 12 s polled, a cgroup not there yet waited for"

# an idle process in the idle cgroup
sh -c "echo \$\$ >$CG2$IDLE/cgroup.procs; exec sleep 600" &
SLEEPER=$!

# b. idle: nothing fires
sleep 3
fired() { rules "[\"$1\"] | .fired + .joined"; }
for r in psi-kernel psi-polled psi-idle; do
	[ "$(fired $r)" = 0 ] || fail "rule $r fired with no pressure: $(rules "[\"$r\"]")"
done
ok "no rule fired in 3 s without pressure"

# c. pressure, until both rules of the loaded cgroup fired (at most 40 s)
sh -c "[ -d $V1 ] && echo \$\$ >$V1/cgroup.procs; echo \$\$ >$CG2$LOADED/cgroup.procs
	while :; do cat $BIG >/dev/null; done" &
LOAD=$!
for _ in $(seq 80); do
	sleep 0.5
	[ "$(fired psi-kernel)" -gt 0 ] && [ "$(fired psi-polled)" -gt 0 ] && break
done
stall=$(head -1 "$CG2$LOADED/memory.pressure")
kill "$LOAD"
wait "$LOAD" 2>/dev/null || true
LOAD=
[ "$(fired psi-kernel)" -gt 0 ] || fail "psi-kernel did not fire under pressure ($stall): $(rules '["psi-kernel"]')"
[ "$(fired psi-polled)" -gt 0 ] || fail "psi-polled did not fire under pressure ($stall): $(rules '["psi-polled"]')"
[ "$(fired psi-idle)" = 0 ] || fail "psi-idle fired: $(rules '["psi-idle"]')"
ok "under pressure ($stall) both rules on $LOADED fired, the one on the idle cgroup did not"

# the incident says what fired it
for _ in $(seq 40); do
	"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json"
	jq -e 'any(.[]; .rules | index("psi-kernel"))' "$T/inc.json" >/dev/null && break
	sleep 0.5
done
jq -e --arg cg "$LOADED" 'any(.[]; (.rules | index("psi-kernel")) and any(.triggers[];
	.type == "pressure" and .resource == "memory" and .kind == "some" and .cgroup == $cg and
	.stalled_percent >= 2 and .threshold_percent == 2 and .over == "2.000s" and (.psi | startswith("some avg10="))))' \
	"$T/inc.json" >/dev/null || fail "no incident of psi-kernel lists its pressure: $(jq -c '[.[] | {rules, reason, triggers}]' "$T/inc.json" | cut -c1-800)"
ok "incident: $(jq -c '[.[] | select(.rules | index("psi-kernel"))][0] | {reason, trigger: .triggers[0]}' "$T/inc.json")"
for _ in $(seq 20); do
	"$FRCTL" --store "$T/store" dump --last 2m --type trigger --format json >"$T/trig.json"
	jq -e -s 'any(.[]; .rule == "psi-kernel") and any(.[]; .rule == "psi-polled")' "$T/trig.json" >/dev/null && break
	sleep 0.5
done
jq -e -s 'any(.[]; .rule == "psi-kernel") and any(.[]; .rule == "psi-polled")' "$T/trig.json" >/dev/null ||
	fail "no trigger records of the pressure rules: $(jq -c -s . "$T/trig.json" | cut -c1-600)"
ok "trigger records of both rules in the store"
stop_daemon
echo "pressure: all checks passed"
