#!/bin/bash
# frctl rules test (issue 45): a rule tried on the stored past decides as
# the daemon did live.  The daemon runs a rule on fr-sleeper's waits over
# 300 ms (before 1 s, after 1 s, cooldown 3 s, at most 3 an hour), and
# fr-sleeper waits 500 ms at known times (s): 0 (fires), 0.55 for 350 ms
# (joins the incident, extending it: the daemon learns of it at 0.9, well
# before the incident is written, 200 ms after its window's end at 1.0),
# 1.9 (after its window, within the cooldown: suppressed), 4.5 (fires),
# 8.5 (fires), 12.5 (the fourth in an hour: suppressed); nothing between
# them waits that long.  Then
# `frctl rules test --json` on the store with the same configuration:
#   - its counts equal the daemon's (frctl status: fired 3, joined 1,
#     suppressed 2), and each outcome is the one expected, in order;
#   - its incidents are the daemon's: the same trigger times, starts and
#     ends (the joined one's end extended), within a millisecond (the
#     daemon dates a record with the clock offset of when it fired, the
#     reader with its chunk's);
#   - --rule picks a rule, an unknown one is exit 2; a bad rule file is
#     one line naming FILE:LINE, exit 2.
# Usage: test-rules-test.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"


cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
sources = { sched = { offcpu_threshold = "250ms"; }; };
triggers = { rules = (
  { name = "fr-slow"; condition = "offcpu_latency"; threshold = "300ms"; comm = "fr-sleeper";
    before = "1s"; after = "1s"; cooldown = "3s"; max_per_hour = 3; }
); };
CONF
start_daemon "$T/fr.conf"
since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)

cp /usr/bin/python3 "$T/fr-sleeper"
"$T/fr-sleeper" -c '
import time
t0 = time.monotonic()
for at, d in ((0, 0.5), (0.55, 0.35), (1.9, 0.5), (4.5, 0.5), (8.5, 0.5), (12.5, 0.5)):
    # up to the wait in steps of 100 ms (under the 250 ms recorded)
    while time.monotonic() - t0 < at - 0.1:
        time.sleep(0.1)
    while time.monotonic() - t0 < at:
        pass
    time.sleep(d)
' & PIDS="$PIDS $!"
wait $PIDS
PIDS=
# the last incident written (its window ends 1 s after 8.5 s), and the
# daemon has seen the last wait
for _ in $(seq 100); do
	live=$("$FRCTL" --store "$T/store" status --json | jq -c '.triggers.rules["fr-slow"] | {fired, joined, suppressed}')
	n=$("$FRCTL" --store "$T/store" incidents --json | jq '[.[] | select(.rules == ["fr-slow"])] | length')
	[ "$live" = '{"fired":3,"joined":1,"suppressed":2}' ] && [ "$n" = 3 ] && break
	sleep 0.2
done
[ "$live" = '{"fired":3,"joined":1,"suppressed":2}' ] && [ "$n" = 3 ] ||
	fail "the daemon did not decide as planned: $live, $n incidents: $(jq -c 'select(.comm == "fr-sleeper") | [.time, .duration_ns]' <("$FRCTL" --store "$T/store" dump --type offcpu --format json))"
ok "live: $live, $n incidents"
# the daemon decides on a record before the chunk that holds it is
# written: the replay waits until the store has all six waits
for _ in $(seq 100); do
	got=$("$FRCTL" --store "$T/store" dump --type offcpu --format json |
		jq -s '[.[] | select(.comm == "fr-sleeper" and .duration_ns >= 300000000)] | length')
	[ "$got" -ge 6 ] && break
	sleep 0.2
done
[ "$got" -ge 6 ] || fail "the store has $got of fr-sleeper's 6 waits after 20 s"

"$FRCTL" --config "$T/fr.conf" --store "$T/store" rules test --since "$since" --json >"$T/tried.json" ||
	fail "rules test failed: $(head -5 "$T/tried.json")"
tried=$(jq -c '.rules[] | select(.name == "fr-slow") | {fired, joined, suppressed}' "$T/tried.json")
[ "$tried" = "$live" ] || fail "rules test: $tried, live: $live"
outcomes=$(jq -r '[.events[] | select(.rule == "fr-slow") | .outcome] | join(",")' "$T/tried.json")
[ "$outcomes" = "fired,joined,suppressed: cooldown,fired,fired,suppressed: max_per_hour" ] ||
	fail "rules test outcomes: $outcomes"
ok "rules test: $tried; $outcomes"

# the incidents: the daemon's and the replay's, side by side (ms)
"$FRCTL" --store "$T/store" incidents --json |
	jq -c '[.[] | select(.rules == ["fr-slow"])] | sort_by(.start) | map([.triggers[0].time, .start, .end])' >"$T/live-inc.json"
jq -c '.incidents | sort_by(.start) | map([.trigger_time, .start, .end])' "$T/tried.json" >"$T/tried-inc.json"
jq -n -e --slurpfile a "$T/live-inc.json" --slurpfile b "$T/tried-inc.json" "$JQ_NS"'
	($a[0] | length) == 3 and ($b[0] | length) == 3 and
	all(range(3) as $i | range(3) as $j | (($a[0][$i][$j] | ns) - ($b[0][$i][$j] | ns) | fabs) < 1e6; .)' >/dev/null ||
	fail "incidents differ: live $(cat "$T/live-inc.json"), tried $(cat "$T/tried-inc.json")"
jq -n -e --slurpfile a "$T/live-inc.json" "$JQ_NS"'($a[0][0][2] | ns) - ($a[0][0][0] | ns) > 1.5e9' >/dev/null ||
	fail "the first incident's end was not extended by the joined trigger: $(cat "$T/live-inc.json")"
ok "incidents: the same 3 windows (trigger, start, end) live and tried: $(cat "$T/tried-inc.json")"

# the text; --rule; a bad rule file
"$FRCTL" --config "$T/fr.conf" --store "$T/store" rules test --since "$since" >"$T/tried.txt"
grep -q '^Rule fr-slow: would have fired 3, joined 1, been suppressed 2$' "$T/tried.txt" ||
	fail "text: $(cat "$T/tried.txt")"
grep -qE '^[0-9T:.Z-]+  fr-slow +fired +incident 1: ' "$T/tried.txt" || fail "text lines: $(head -4 "$T/tried.txt")"
out=$("$FRCTL" --config "$T/fr.conf" --store "$T/store" rules test --rule nosuch 2>&1) && fail "--rule nosuch was taken"
[ $? -eq 2 ] && grep -q 'no rule "nosuch"' <<<"$out" || fail "--rule nosuch: $out"
cat >"$T/bad.conf" <<CONF
triggers = { rules = (
  { name = "x"; condition = "offcpu_latency";
    threshold = "fast"; }
); };
CONF
out=$("$FRCTL" --config "$T/bad.conf" --store "$T/store" rules test 2>&1) && fail "a bad rule file was taken"
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "bad.conf:3:" <<<"$out" ||
	fail "a bad rule file: exit $rc, want 2 and one line with bad.conf:3: $out"
ok "text summary; --rule nosuch: exit 2; bad rule file: $out"
