#!/bin/bash
# The shipped configuration, unchanged, freezes what every site wants
# (conf/flightrec.conf, triggers):
#   a. a real SIGSEGV (python3 dereferencing NULL) gives a "crash"
#      incident, written within its window's end (+10 s) plus 5 s (the
#      file's last change against the window's end); its
#      trigger names the executable (frctl incidents --json) and the
#      trigger record says the signal record fired it (report, JSON)
#   b. a real OOM kill in a v1 memory cgroup gives an "oom" incident,
#      within its window's end plus 5 s
#   c. a crash loop, 50 crashes in 10 s on a fresh daemon, gives one
#      incident (the others join it, its end moved at most max_extend =
#      10 s past the first), written within after + max_extend + 5 s of
#      the first crash; every crash is counted (fired + joined +
#      suppressed = 50 in frctl status)
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"
SHIPPED="$(dirname "$0")/../../conf/flightrec.conf"

MEMCG=/sys/fs/cgroup/memory/fr-default-oom-$$
teardown() {
	[ -d "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null || true
	cleanup
}
trap teardown EXIT

"$FLIGHTRECD" --check-config --config "$SHIPPED" | grep -qx "configuration OK" ||
	fail "the shipped configuration does not check"

# incident_by DEADLINE_S JQ [ARGS]: waits until DEADLINE_S (in $SECONDS)
# for an incident matching JQ; prints its id
incident_by() {
	local deadline=$1 filter=$2
	shift 2
	while [ "$SECONDS" -le "$deadline" ]; do
		"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json" 2>/dev/null || true
		if jq -e "$@" "[.[] | select($filter)] | length > 0" "$T/inc.json" >/dev/null 2>&1; then
			jq -r "$@" "[.[] | select($filter)][0].id" "$T/inc.json"
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# written_after_end ID: seconds from the incident's window end to its file's
# last change (its sealing); fails beyond 5 s
written_after_end() {
	"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json"
	/usr/bin/python3 - "$T/inc.json" "$1" <<'PY' || fail "incident $1 was not written within its window's end + 5 s"
import json, os, sys
from datetime import datetime
i = [x for x in json.load(open(sys.argv[1])) if x["id"] == sys.argv[2]][0]
end = datetime.fromisoformat(i["end"][:26] + "+00:00").timestamp()
late = os.stat(i["path"]).st_mtime - end
print("%.2f" % late)
sys.exit(0 if late <= 5 else 1)
PY
}

start_daemon "$SHIPPED"
"$FRCTL" --store "$T/store" status --json | jq -e '.triggers.rules | keys == ["crash", "manual", "oom"]' >/dev/null ||
	fail "the shipped rules are not active: $("$FRCTL" --store "$T/store" status --json | jq -c .triggers.rules)"
ok "shipped configuration: rules crash, manual, oom active"

# a. a real SIGSEGV, in a process whose exec the store has
ulimit -c 0
sleep 0.5
t0=$SECONDS
sh -c 'echo $$ >"$1"; exec /usr/bin/python3 -c "import ctypes; ctypes.string_at(0)"' sh "$T/segv.pid" 2>/dev/null || true
SEGV=$(cat "$T/segv.pid")
# (within after + max_extend + 5 s even if other triggers join it)
ID=$(incident_by $((t0 + 10 + 10 + 5)) '(.rules | index("crash")) and any(.triggers[]; .pid == $p and .signal == "SIGSEGV")' \
	--argjson p "$SEGV") || fail "no crash incident for python3 $SEGV within 25 s"
late=$(written_after_end "$ID")
ok "SIGSEGV of python3 $SEGV -> incident $ID in $((SECONDS - t0)) s, written $late s after its window's end"
jq -e --argjson p "$SEGV" '[.[] | .triggers[] | select(.pid == $p)][0] | .exe == "/usr/bin/python3"' "$T/inc.json" >/dev/null ||
	fail "the crash trigger does not name its executable: $(jq -c --argjson p "$SEGV" '[.[] | .triggers[] | select(.pid == $p)][0]' "$T/inc.json")"
ok "the trigger names exe /usr/bin/python3"
"$FRCTL" --store "$T/store" dump --incident "$ID" --type trigger --format json >"$T/trig.json"
jq -e -s --argjson p "$SEGV" 'any(.[]; .pid == $p and .fired_on.type == "signal")' "$T/trig.json" >/dev/null ||
	fail "the trigger record does not say it fired on the signal: $(cat "$T/trig.json")"
"$FRCTL" --store "$T/store" report --incident "$ID" >"$T/report.txt"
grep -A1 -E "trigger.*crash" "$T/report.txt" | grep -E "fired on: .*signal.*SIGSEGV" >/dev/null ||
	{ cat "$T/report.txt" >&2; fail "the report does not show the SIGSEGV as what fired the rule"; }
ok "trigger record and report: fired on the SIGSEGV signal record"

# b. a real OOM kill, once the crash's incident is written (else it joins it)
t0=$SECONDS
mkdir "$MEMCG"
echo $((32 << 20)) >"$MEMCG/memory.limit_in_bytes"
sh -c "echo \$\$ >$MEMCG/cgroup.procs; echo \$\$ >$T/oom.pid; exec /usr/bin/python3 -c 'x = b\"\\x01\" * (256 << 20)'" 2>/dev/null || true
OOM=$(cat "$T/oom.pid")
ID=$(incident_by $((t0 + 10 + 10 + 5)) '(.rules | index("oom")) and any(.triggers[]; .pid == $p and .type == "oom")' \
	--argjson p "$OOM") || { rmdir "$MEMCG"; fail "no oom incident for $OOM within 25 s"; }
rmdir "$MEMCG"
late=$(written_after_end "$ID")
ok "OOM kill of $OOM -> incident $ID in $((SECONDS - t0)) s, written $late s after its window's end"
stop_daemon

# c. a crash loop on a fresh daemon (no cooldown running)
rm -rf "$T/store"
start_daemon "$SHIPPED"
sleep 0.5
t0=$SECONDS
for _ in $(seq 50); do
	"$HELPERS/fr-segv" >/dev/null 2>&1 || true
	sleep 0.2
done
ok "50 crashes in $((SECONDS - t0)) s"
ID=$(incident_by $((t0 + 10 + 10 + 5)) '.rules | index("crash")') ||
	fail "no crash incident within after + max_extend + 5 s of the first crash"
ok "first incident $ID written within $((SECONDS - t0)) s of the first crash"
sleep 2
"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json"
"$FRCTL" --store "$T/store" status --json >"$T/status.json"
n=$(jq '[.[] | select(.rules | index("crash"))] | length' "$T/inc.json")
c=$(jq '.triggers.rules.crash' "$T/status.json")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "50 crashes gave $n incidents: $(jq -c '[.[] | {id, n: (.triggers | length)}]' "$T/inc.json")"
jq -e '.fired + .joined + .suppressed >= 50 and .fired == '"$n" <<<"$c" >/dev/null ||
	fail "not every crash is counted: $c"
listed=$(jq '[.[] | select(.rules | index("crash")) | (.triggers | length) + (.triggers_unlisted // 0)] | add' "$T/inc.json")
jq -e --argjson l "$listed" '.fired + .joined == $l' <<<"$c" >/dev/null ||
	fail "the incidents list $listed triggers, status counts $c"
ok "50 crashes -> $n incident(s); status crash $(jq -c . <<<"$c")"
stop_daemon
