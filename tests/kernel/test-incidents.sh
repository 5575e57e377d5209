#!/bin/bash
# Triggers and incidents, for real:
#   - a read() blocked past a rule's threshold -> exactly one incident whose
#     window is [trigger - before, trigger + after], holding the triggering
#     syscall record and the process's exec
#   - a NULL dereference -> an incident from the signal rule, target pid
#   - an OOM kill in a v1 memory cgroup -> an incident from the OOM rule
#   - frctl freeze --reason x -> an incident with that reason
#   - ten triggers in a burst -> one incident listing ten triggers; later
#     ones within the cooldown are counted, not frozen
#   - the rule's exec action gets the incident path
#   - incidents stay readable after the ring has wrapped several times
BUILD=$1
HELPERS=$2
STORM=$HELPERS/fr-exec-storm
. "$(dirname "$0")/lib.sh"
MEMCG=/sys/fs/cgroup/memory/fr-inc-$$
trap '[ -d "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null; cleanup' EXIT

cat >"$T/action.sh" <<ACTION
#!/bin/sh
echo "\$1" >>"$T/action.out"
ACTION
chmod +x "$T/action.sh"
cat >"$T/fr.conf" <<CONF
store = { size = "4M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "2s"; };
recorder = { chunk_size = "16K"; };
sources = { syscall = { enabled = true; }; };
triggers = {
  rules = (
    { name = "slow-read"; condition = "syscall_latency"; threshold = "1s"; syscalls = [ "read" ];
      comm = "fr-block-read"; before = "4s"; after = "2s"; exec = [ "$T/action.sh" ]; },
    { name = "burst"; condition = "syscall_latency"; threshold = "200ms"; comm = "fr-burst*";
      before = "1s"; after = "2s"; cooldown = "1h"; },
    { name = "crash"; condition = "signal"; signals = [ "SIGSEGV" ]; comm = "fr-segv"; before = "2s"; after = "1s"; },
    { name = "oom"; condition = "oom"; before = "2s"; after = "1s"; },
    { name = "manual"; condition = "manual"; before = "2s"; after = "1s"; }
  );
};
CONF
start_daemon "$T/fr.conf"
incidents() { "$FRCTL" --store "$T/store" incidents --json; }
wait_incidents() { # N: until N incident files exist
	for _ in $(seq 100); do
		[ "$(incidents | jq length)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "expected $1 incidents, have $(incidents | jq length)"
}
# JQ ARGS...: until an incident matches (by content, not position: other
# processes on a shared machine may crash and open incidents of their own)
wait_match() {
	local f=$1
	shift
	for _ in $(seq 100); do
		incidents | jq -e "$@" "any(.[]; $f)" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# 1. a slow read
HELPER=$(readlink -f "$HELPERS/fr-block-read")
OUT=$("$HELPER" "incident-marker-$$" 1500)
HPID=$(jq .pid <<<"$OUT")
wait_incidents 1
sleep 0.5
incidents >"$T/i1.json"
jq -e 'length == 1 and .[0].rules == ["slow-read"] and (.[0].triggers | length) == 1' "$T/i1.json" >/dev/null ||
	fail "not exactly one slow-read incident: $(cat "$T/i1.json")"
ID=$(jq -r '.[0].id' "$T/i1.json")
jq -e --argjson p "$HPID" '.[0].triggers[0].pid == $p and .[0].triggers[0].syscall == "read" and .[0].triggers[0].comm == "fr-block-read"' "$T/i1.json" >/dev/null ||
	fail "the trigger is not the read of $HPID"
# window = [trigger - 4s, trigger + 2s]; the trigger record's time is the start of the call
python3 - "$T/i1.json" <<'PY' || fail "window bounds wrong"
import json, sys, datetime
i = json.load(open(sys.argv[1]))[0]
def t(s):
    return datetime.datetime.fromisoformat(s[:26] + "+00:00").timestamp()
trig = t(i["triggers"][0]["time"])
assert abs(t(i["start"]) - (trig - 4)) < 0.01, (i["start"], trig)
assert abs(t(i["end"]) - (trig + 2)) < 0.01, (i["end"], trig)
print("ok: window %s .. %s around the trigger at %s" % (i["start"], i["end"], i["triggers"][0]["time"]))
PY
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/inc1.json"
jq -e -s --argjson p "$HPID" 'any(.[]; .type == "syscall" and .pid == $p and .syscall == "read") and
	any(.[]; .type == "exec" and .pid == $p and (.argv | index("incident-marker-'$$'")))' "$T/inc1.json" >/dev/null ||
	fail "incident $ID lacks the read or the exec of $HPID"
ok "slow read -> one incident holding the triggering record and the exec"
for _ in $(seq 50); do [ -s "$T/action.out" ] && break; sleep 0.1; done
grep -qx "$T/store/incidents/$ID.fri" "$T/action.out" || fail "the exec action did not get the incident path"
ok "exec action ran with the incident path"

# 2. SIGSEGV
sleep 1
ulimit -c 0
SEGV=$("$HELPERS/fr-segv" || true)
wait_match '.rules == ["crash"] and any(.triggers[]; .pid == $p and .signal == "SIGSEGV")' --argjson p "$SEGV" ||
	fail "no crash incident for $SEGV"
ok "SIGSEGV -> crash incident for pid $SEGV"

# 3. OOM
sleep 1.5
mkdir "$MEMCG"
echo $((32 << 20)) >"$MEMCG/memory.limit_in_bytes"
sh -c "echo \$\$ >$MEMCG/cgroup.procs; echo \$\$ >$T/oom.pid; exec python3 -c 'x = b\"\\x01\" * (256 << 20)'" 2>/dev/null || true
OOM=$(cat "$T/oom.pid")
wait_match '.rules == ["oom"] and .triggers[0].pid == $p and .triggers[0].type == "oom"' --argjson p "$OOM" ||
	{ rmdir "$MEMCG"; fail "no oom incident naming $OOM"; }
rmdir "$MEMCG"
ok "OOM kill -> oom incident naming victim $OOM"

# 4. freeze (alone: a freeze inside an open incident's window joins it)
sleep 1.5
for _ in $(seq 50); do
	[ "$("$FRCTL" --store "$T/store" status --json | jq .triggers.open)" = 0 ] && break
	sleep 0.1
done
"$FRCTL" --store "$T/store" freeze --reason "operator says x" >/dev/null
wait_match '.rules == ["manual"] and .reason == "operator says x"' || fail "no manual incident with the reason"
ok "frctl freeze --reason -> incident with that reason"

# 5. a burst of ten, then more within the cooldown
sleep 1.5
ln -sf "$HELPER" "$T/fr-burst"
pids=()
for i in $(seq 10); do "$T/fr-burst" burst-$i 300 >/dev/null & pids+=($!); done
wait "${pids[@]}"   # not a bare wait: the daemon is a job of this shell too
wait_match '.rules == ["burst"]' || fail "no burst incident"
sleep 2.5   # past that incident's window
for i in $(seq 3); do "$T/fr-burst" late-$i 300 >/dev/null; done
sleep 1
incidents >"$T/all.json"
jq -e '[.[] | select(.rules == ["burst"])] | length == 1 and (.[0].triggers | length) == 10' "$T/all.json" >/dev/null ||
	fail "the burst is not one incident with ten triggers: $(jq -c '[.[] | {id, rules, n: (.triggers | length)}]' "$T/all.json")"
"$FRCTL" --store "$T/store" status --json | jq -e '.triggers.rules.burst.fired == 1 and
	.triggers.rules.burst.joined == 9 and .triggers.rules.burst.suppressed == 3' >/dev/null ||
	fail "burst governance: $("$FRCTL" --store "$T/store" status --json | jq -c .triggers.rules.burst)"
ok "ten triggers -> one incident listing ten; three more within the cooldown counted, not frozen"

# 6. the ring wraps several times; the incident still reads the same
"$STORM" 20000
stop_daemon
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/inc1-after.json"
cmp -s "$T/inc1.json" "$T/inc1-after.json" || fail "incident $ID changed after the ring wrapped"
"$FRCTL" --store "$T/store" dump --format json | jq -e -s --argjson p "$HPID" 'all(.[]; .pid != $p)' >/dev/null ||
	fail "the ring did not wrap past the incident's records"
ok "incident $ID reads the same after the ring wrapped past its window"
