#!/bin/bash
# Standalone windows: a process started before the daemon (its exec was
# never recorded) keeps making slow syscalls; a forked-only subshell and
# processes exec'd during recording add records too.  A window cut from the
# middle of the recording, after the first keyframes, must name every pid
# it mentions with comm and exe, and P's exe must be its real executable.
BUILD=$1
. "$(dirname "$0")/lib.sh"

python3 -c 'import time
while True:
    time.sleep(0.12)' &
P=$!
( while :; do sleep 0.15; done ) &
S=$!
trap 'kill $P $S 2>/dev/null || true; wait $P $S 2>/dev/null || true; cleanup' EXIT

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; keyframe_interval = "2s"; };
sources = { syscall = { enabled = true; threshold = "100ms"; exclude = [ ]; }; };
CONF
start_daemon "$T/fr.conf"
t0=$(date +%s.%N)
sleep 7.5
t1=$(date +%s.%N)
P_EXE=$(readlink "/proc/$P/exe")   # now: launchers (pyenv) exec through /usr/bin/env first
stop_daemon
kill $P $S; wait $P $S 2>/dev/null || true

since=$(date -u -d "@$(awk -v t="$t0" 'BEGIN { printf "%.3f", t + 4.5 }')" +%Y-%m-%dT%H:%M:%S.%NZ)
until=$(date -u -d "@$(awk -v t="$t1" 'BEGIN { printf "%.3f", t - 1 }')" +%Y-%m-%dT%H:%M:%S.%NZ)
"$FRCTL" --store "$T/store" dump --since "$since" --until "$until" --format json >"$T/window.json"
n=$(wc -l <"$T/window.json")
[ "$n" -gt 10 ] || fail "the window [$since, $until] holds only $n records"

jq -e -s --argjson p "$P" '[.[] | select(.pid == $p)] | length > 5' "$T/window.json" >/dev/null ||
	fail "no records of the pre-existing process $P in the window"
jq -e -s --argjson p "$P" --arg exe "$P_EXE" 'all(.[] | select(.pid == $p); .exe == $exe and .comm == "python3")' \
	"$T/window.json" >/dev/null || fail "records of $P do not name exe $P_EXE: $(jq -c -s --argjson p "$P" '[.[] | select(.pid == $p)][0]' "$T/window.json")"
ok "pre-existing process $P named by the keyframe: comm python3, exe $P_EXE"

jq -e -s --argjson s "$S" 'any(.[]; .pid == $s)' "$T/window.json" >/dev/null ||
	fail "no records of the forked subshell $S"
# system-wide records (gap, metrics) have no process; kernel threads have
# no executable, and say so
unnamed=$(jq -c -s '[.[] | select(.type != "gap" and .type != "metrics" and
	(.comm == "" or (.exe == null and .kernel_thread != true)))]' "$T/window.json")
[ "$unnamed" = "[]" ] || fail "records without comm or exe in the window: $unnamed"
ok "every one of $n records in a window from the middle names its process (comm and exe)"
