#!/bin/bash
# Incidents end, and say what fired them:
#   a. an offcpu_latency rule fires on a 1.5 s sleep of a process that
#      exits right after: "frctl report" shows the offcpu record as what
#      fired the rule (not the exit that came after it), and the trigger
#      record's fired_on says offcpu
#   b. a rule that fires every second for 25 s: triggers join the open
#      incident only until its end has moved max_extend (its after, 3 s)
#      past the first end, so the first incident is written within
#      after + max_extend (+ slack) of the first trigger, not when the
#      firing stops; later triggers open new incidents (about one each
#      7 s: 25 s gives three or four), and every one of the 25 is in an
#      incident or counted (fired + joined + suppressed)
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/conf" <<CONF
store = { size = "64M"; segments = 8; };
triggers = {
  rules = (
    { name = "nap"; condition = "offcpu_latency"; threshold = "1s"; comm = "fr-nap";
      before = "2s"; after = "1s"; },
    { name = "tick"; condition = "signal"; signals = [ "SIGUSR1" ]; comm = "fr-tick";
      before = "5s"; after = "3s"; }
  );
};
CONF
ln -s "$(command -v sleep)" "$T/fr-nap"
ln -s "$(command -v bash)" "$T/fr-tick"
start_daemon "$T/conf"

# a. the record that fired
sleep 0.5
"$T/fr-nap" 1.5
for _ in $(seq 50); do
	"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json"
	jq -e 'any(.[]; .rules == ["nap"])' "$T/inc.json" >/dev/null && break
	sleep 0.2
done
jq -e 'any(.[]; .rules == ["nap"])' "$T/inc.json" >/dev/null || fail "no nap incident"
"$FRCTL" --store "$T/store" report --last 1m >"$T/report.txt"
grep -A1 -E "trigger +fr-nap.*rule nap" "$T/report.txt" >"$T/fired.txt" || true
grep -E "fired on: .*offcpu +fr-nap.*blocked" "$T/fired.txt" >/dev/null ||
	{ cat "$T/report.txt" >&2; fail "the report does not show the offcpu record as what fired rule nap"; }
"$FRCTL" --store "$T/store" dump --last 1m --type trigger --format json >"$T/trig.json"
jq -e -s 'any(.[]; .rule == "nap" and .fired_on.type == "offcpu")' "$T/trig.json" >/dev/null ||
	fail "the nap trigger record has no fired_on offcpu: $(cat "$T/trig.json")"
ok "offcpu rule: report and trigger record name the offcpu record, not the exit after it"

# b. a rule firing every second for 25 s
TICKS=25
"$T/fr-tick" -c 'trap : USR1; while :; do sleep 0.1; done' &
TICK=$!
sleep 0.5
t0=$SECONDS
first=
for i in $(seq "$TICKS"); do
	kill -USR1 "$TICK"
	if [ -z "$first" ] && compgen -G "$T/store/incidents/*-tick*.fri" >/dev/null; then
		first=$((SECONDS - t0))
	fi
	sleep 1
done
kill "$TICK"
wait "$TICK" 2>/dev/null || true
[ -n "$first" ] || fail "no tick incident was written while the rule kept firing for $TICKS s"
# after 3 s + max_extend 3 s, written 0.2 s later; 1 s of polling, 2 s slack
[ "$first" -le 9 ] || fail "the first tick incident was written $first s after the first trigger (bound 9 s)"
ok "rule firing every second: first incident written within $first s"
sleep 8   # the last incident's window ends and is written
"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json"
"$FRCTL" --store "$T/store" status --json | jq .triggers.rules.tick >"$T/tick.json"
n=$(jq '[.[] | select(.rules == ["tick"])] | length' "$T/inc.json")
jq -e --argjson n "$TICKS" '.fired + .joined + .suppressed == $n' "$T/tick.json" >/dev/null ||
	fail "not every trigger is counted: $(jq -c . "$T/tick.json")"
listed=$(jq '[.[] | select(.rules == ["tick"]) | (.triggers | length) + (.triggers_unlisted // 0)] | add' "$T/inc.json")
jq -e --argjson l "$listed" --argjson n "$n" '.fired == $n and .fired + .joined == $l' "$T/tick.json" >/dev/null ||
	fail "incidents ($n) list $listed triggers; status: $(jq -c . "$T/tick.json")"
/usr/bin/python3 - "$T/inc.json" <<'PY' || fail "an incident is longer than before + after + max_extend"
import json, sys
from datetime import datetime
def t(s):
    return datetime.fromisoformat(s[:26] + "+00:00").timestamp()
for i in json.load(open(sys.argv[1])):
    if i["rules"] == ["tick"] and t(i["end"]) - t(i["start"]) > 5 + 3 + 3 + 0.01:
        print("incident %s spans %.1f s" % (i["id"], t(i["end"]) - t(i["start"])), file=sys.stderr)
        sys.exit(1)
PY
[ "$n" -ge 2 ] || fail "$TICKS s of triggers gave only $n incident(s)"
ok "$TICKS triggers -> $n incidents, each at most 11 s long; status tick $(jq -c . "$T/tick.json")"
stop_daemon
