#!/bin/bash
# The recording spine end to end, with real BPF: an exec with a unique argv,
# its exit, and a read() blocked 1.5 s on a pipe are found by
# `frctl dump --last 30s --format json` with the right pid, filename, argv
# and a duration within 10 % of the real wait; nothing from the daemon's own
# pid; and the dump still works after the daemon stopped.
BUILD=$1
HELPER=$(readlink -f "$2")
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; };
sources = { syscall = { enabled = true; }; };
CONF

start_daemon "$T/fr.conf"

MARKER="marker-$$-$RANDOM$RANDOM"
OUT=$("$HELPER" "$MARKER" 1500)
HPID=$(jq -r .pid <<<"$OUT")
WAITED=$(jq -r .waited_ns <<<"$OUT")
wait_for_record ".type == \"syscall\" and .pid == $HPID"
wait_for_record ".type == \"exit\" and .pid == $HPID"

"$FRCTL" --store "$T/store" dump --last 30s --format json >"$T/dump.json"
[ -s "$T/dump.json" ] || fail "dump is empty"

# every line is a JSON object with the common fields
jq -e -s 'all(.[]; has("type") and has("time") and has("boot_id") and has("cpu") and has("pid")
          and has("tid") and has("comm") and has("cgroup"))' "$T/dump.json" >/dev/null ||
	fail "a record lacks a common field"

jq -e -s --arg f "$HELPER" --arg m "$MARKER" --argjson p "$HPID" '
	[.[] | select(.type == "exec" and .pid == $p)] | length == 1 and
	.[0].filename == $f and .[0].argv == [$f, $m, "1500"] and .[0].comm == "fr-block-read"' \
	"$T/dump.json" >/dev/null || fail "exec record of pid $HPID with argv [$HELPER $MARKER 1500] not found"
ok "exec record with pid, filename and argv"

jq -e -s --argjson p "$HPID" '[.[] | select(.type == "exit" and .pid == $p)] |
	length == 1 and .[0].exit_code == 0 and .[0].signal == null' "$T/dump.json" >/dev/null ||
	fail "exit record of pid $HPID not found"
ok "exit record"

DUR=$(jq -s --argjson p "$HPID" '[.[] | select(.type == "syscall" and .pid == $p and .syscall == "read")][0].duration_ns' "$T/dump.json")
[ "$DUR" != null ] || fail "slow read of pid $HPID not found"
jq -e -n --argjson d "$DUR" --argjson w "$WAITED" '($d - $w | fabs) <= 0.10 * $w' >/dev/null ||
	fail "read duration $DUR ns is not within 10 % of the measured wait $WAITED ns"
ok "slow read: recorded $DUR ns, measured $WAITED ns"

jq -e -s --argjson d "$DPID" 'all(.[]; .pid != $d)' "$T/dump.json" >/dev/null ||
	fail "records from the daemon's own pid $DPID"
ok "no records from the daemon (pid $DPID)"

# one writer per store: a second daemon refuses with one clear line
rc=0
"$FLIGHTRECD" --config "$T/fr.conf" --store "$T/store" --socket "$T/second.sock" >"$T/second.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a second flightrecd on the same store exited $rc, expected 1"
grep -q "Store $T/store is in use by another flightrecd" "$T/second.log" ||
	fail "second daemon did not say the store is in use: $(cat "$T/second.log")"
kill -0 "$DPID" || fail "the first daemon died when a second one tried the store"
ok "a second daemon on the same store is refused"

# the store is root's and not world-readable
[ "$(stat -c '%a %U' "$T/store")" = "750 root" ] || fail "store dir is $(stat -c '%a %U' "$T/store")"
[ "$(stat -c '%a %U' "$T/store/segments")" = "750 root" ] || fail "segments dir is $(stat -c '%a %U' "$T/store/segments")"
for f in "$T/store/segments/"*.frs; do
	[ "$(stat -c '%a %U' "$f")" = "640 root" ] || fail "$f is $(stat -c '%a %U' "$f")"
done
ok "store 0750, segment files 0640, owned by root"

# the status the daemon reports agrees with BPF's counters
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
jq -e '.running == true and (.per_cpu | length) >= 1 and .sources.proc.attached and
	.sources.syscall.attached and .store.bytes_used > 0 and .store.oldest != null' \
	"$T/status.json" >/dev/null || fail "status --json incomplete: $(cat "$T/status.json")"
ok "status --json"

stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/after.json"
jq -e -s --arg m "$MARKER" 'any(.[]; .type == "exec" and (.argv | index($m)))' "$T/after.json" >/dev/null ||
	fail "the exec record is gone after the daemon stopped"
grep -q '"type":"syscall"' "$T/after.json" || fail "syscall records gone after stop"
ok "dump works after the daemon stopped"

rc=0
"$FRCTL" --store "$T/store" status >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "status of a stopped daemon exits $rc, expected 3"
ok "status exits 3 when the daemon is not running"
