#!/bin/bash
# An incident's reason is whatever 'frctl freeze --reason' was given:
# 'frctl incidents' must not send its control characters to the terminal.
# A reason with an escape sequence (clear screen, set the window title),
# a bell, a backslash and a newline is listed on one line, each of them
# as \xNN, while --json keeps the text exactly.
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "500ms"; } ); };
CONF
start_daemon "$T/fr.conf"
REASON=$'\e[2J\e]0;owned\a first \\ line\nsecond line'
"$FRCTL" --store "$T/store" freeze --reason "$REASON" >/dev/null
for _ in $(seq 100); do
	[ "$("$FRCTL" --store "$T/store" incidents --json | jq length)" -ge 1 ] && break
	sleep 0.1
done
"$FRCTL" --store "$T/store" incidents --json >"$T/incidents.json"
jq -e --arg r "$REASON" 'length == 1 and .[0].reason == $r' "$T/incidents.json" >/dev/null ||
	fail "the incident does not carry the reason as given: $(cat "$T/incidents.json")"
ok "--json: the reason exactly as given"

"$FRCTL" --store "$T/store" incidents >"$T/incidents.txt"
[ "$(wc -l <"$T/incidents.txt")" -eq 1 ] || fail "not one line per incident: $(od -c "$T/incidents.txt" | head)"
# no control character but the line's end, no DEL
if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/incidents.txt"; then
	fail "control characters reach the terminal: $(od -c "$T/incidents.txt" | head)"
fi
want='reason: \x1b[2J\x1b]0;owned\x07 first \x5c line\x0asecond line'
grep -qF -- "$want" "$T/incidents.txt" || fail "reason not escaped as expected: $(cat "$T/incidents.txt")"
ok "text: the reason on one line, control characters as \\xNN"
