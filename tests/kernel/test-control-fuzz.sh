#!/bin/bash
# Malformed control messages against a real flightrecd: thousands of bad
# requests on its control socket (control-fuzz.py: truncated and
# bit-flipped JSON, binary junk, oversized messages, wrong types, deep
# nesting, clients that leave before the reply) and junk datagrams on its
# annotation socket, then clients that connect and never send.  Afterwards
# the daemon is alive, answers status, every reply was one JSON object,
# it recorded an exec that ran after the fuzzing and the mark sent at the
# end, its fd count did not grow, and what it stored still dumps as JSON.
BUILD=$1
COUNT=${FR_CONTROL_FUZZ_COUNT:-3000}
. "$(dirname "$0")/lib.sh"
FUZZ=$(dirname "$0")/control-fuzz.py

cat >"$T/fr.conf" <<CONF
store = { size = "8M"; segments = 4; sync_interval = "200ms"; };
recorder = { chunk_size = "16K"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "1s"; after = "200ms"; cooldown = "1h"; } ); };
CONF
start_daemon "$T/fr.conf"
SOCK=$T/store/control.sock
ANNOTATE=$T/store/annotate.sock
[ -S "$SOCK" ] && [ -S "$ANNOTATE" ] || fail "no control or annotation socket in $T/store"
fds() { ls "/proc/$DPID/fd" | wc -l; }
# the daemon's fds once it is up (warm: one request served)
"$FRCTL" --store "$T/store" status >/dev/null || fail "status before fuzzing"
fds_before=$(fds)

t0=$(date +%s.%N)
python3 "$FUZZ" "$SOCK" "$ANNOTATE" "$COUNT" 1 >"$T/fuzz.json" 2>"$T/fuzz.err" ||
	fail "control-fuzz.py: $(tail -5 "$T/fuzz.err")"
t1=$(date +%s.%N)
kill -0 "$DPID" 2>/dev/null || fail "flightrecd died during the fuzzing"
sent=$(jq .sent "$T/fuzz.json")
[ "$sent" -eq "$COUNT" ] || fail "sent $sent of $COUNT requests"
ok "$COUNT malformed requests in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s: $(cat "$T/fuzz.json")"
# only the requests meant to succeed did: a freeze, a mark, a status
jq -e '.errors > .ok and .replies > 0' "$T/fuzz.json" >/dev/null || fail "replies: $(cat "$T/fuzz.json")"

# Clients that connect and never send, more of them than the daemon keeps
# waiting (64): the loop never waits for one, so status answers at once.
python3 - "$SOCK" 100 <<'PY' &
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(4)
PY
HOLD=$!
sleep 1
s0=$(date +%s%N)
"$FRCTL" --store "$T/store" status >/dev/null || fail "status while 100 silent clients are connected"
s1=$(date +%s%N)
wait "$HOLD"
ms=$(((s1 - s0) / 1000000))
# a stall would be a receive timeout (seconds); a busy VM takes tens of ms
[ "$ms" -lt 500 ] || fail "status took $ms ms with 100 silent clients connected"
ok "status answered in $ms ms with 100 silent clients connected"

kill -0 "$DPID" 2>/dev/null || fail "flightrecd died"
"$FRCTL" --store "$T/store" status --json >"$T/status.json" || fail "frctl status after fuzzing"
jq -e '.running == true' "$T/status.json" >/dev/null || fail "status after fuzzing: $(head -c 300 "$T/status.json")"
# still recording: an exec after the fuzzing, and a mark through the socket
marker=fr-after-fuzz-$$
/bin/echo "$marker" >/dev/null
"$FRCTL" --store "$T/store" mark "$marker" || fail "frctl mark after fuzzing"
wait_for_record ".type == \"mark\" and .text == \"$marker\""
wait_for_record ".type == \"exec\" and (.argv | index(\"$marker\"))"
ok "still recording after the fuzzing: the exec of /bin/echo $marker and the mark"

fds_after=$(fds)
# a leak per request would be thousands; the symbolizer's bounded cache of
# open binaries may take one or two for the processes that ran meanwhile
[ "$fds_after" -le $((fds_before + 4)) ] || fail "fd count grew from $fds_before to $fds_after: $(ls -l "/proc/$DPID/fd")"
ok "fd count $fds_before before, $fds_after after"

# everything the fuzzing marked (invalid UTF-8, control bytes) dumps as JSON
"$FRCTL" --store "$T/store" dump --format json >"$T/all.json" || fail "dump after fuzzing"
jq -e -s 'length > 0' "$T/all.json" >/dev/null || fail "the dump after fuzzing is not JSON Lines"
n=$(jq -s '[.[] | select(.type == "mark")] | length' "$T/all.json")
"$FRCTL" --store "$T/store" dump >/dev/null || fail "text dump after fuzzing"
"$FRCTL" --store "$T/store" report >/dev/null || fail "report after fuzzing"
ok "the store dumps as JSON Lines and text after the fuzzing ($n marks)"
stop_daemon
