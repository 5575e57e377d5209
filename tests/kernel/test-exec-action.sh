#!/bin/bash
# The incident command (a rule's exec action) is safe to run on a recorder:
#   - no shell: an argument with spaces, ';' and '$(...)' arrives as one
#     argument, verbatim, and nothing in it runs
#   - its output (1 MiB on stdout and stderr) goes to the daemon's log
#   - past exec_timeout (1 s) it is killed with everything it started (its
#     process group: a background `sleep` must die too), and the log says so
#   - while it runs, sleeps and floods the log, recording goes on: every
#     marker exec'd meanwhile is stored and status answers within 1 s
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

ARG="two words; touch $T/pwned \$(touch $T/pwned2)"
cat >"$T/action.sh" <<ACTION
#!/bin/sh
for a in "\$@"; do printf '%s\n' "\$a"; done >"$T/action.args"
sleep 300 &
echo \$! >"$T/grandchild.pid"
i=0
while [ \$i -lt 8000 ]; do
	echo "action-out-\$i ................................................................................................"
	echo "action-err-\$i ................................................................................................" >&2
	i=\$((i + 1))
done
echo done >"$T/action.printed"
wait
ACTION
chmod +x "$T/action.sh"
cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
triggers = {
  rules = (
    { name = "manual"; condition = "manual"; before = "1s"; after = "0s";
      exec = [ "$T/action.sh", "$ARG" ]; exec_timeout = "2s"; }
  );
};
CONF
start_daemon "$T/fr.conf"
trap '{ [ -s "$T/grandchild.pid" ] && kill "$(cat "$T/grandchild.pid")" 2>/dev/null; } || true; cleanup' EXIT

"$FRCTL" --store "$T/store" freeze --reason exec-action-test >/dev/null || fail "freeze failed"
for _ in $(seq 100); do [ -s "$T/grandchild.pid" ] && break; sleep 0.05; done
[ -s "$T/grandchild.pid" ] || fail "the action did not start"
GRANDCHILD=$(cat "$T/grandchild.pid")
# while the action runs: markers every 50 ms, status every 200 ms
start=$(date +%s%N)
n=0
slowest=0
while [ $(($(date +%s%N) - start)) -lt 3500000000 ]; do
	/bin/true "actionmark-$$-$n"
	n=$((n + 1))
	if [ $((n % 4)) -eq 0 ]; then
		a=$(date +%s%N)
		timeout 5 "$FRCTL" --store "$T/store" status >/dev/null || fail "status did not answer while the action ran"
		ms=$((($(date +%s%N) - a) / 1000000))
		[ "$ms" -gt "$slowest" ] && slowest=$ms
	fi
	sleep 0.05
done

grep -q 'did not finish in time; killing it' "$T/daemon.log" || fail "no timeout in the log"
grep -q 'was killed by signal 9' "$T/daemon.log" || fail "the action's end is not in the log"
ok "the action was killed at its timeout, and the log says so"
# killed, it may stay a zombie a moment until whoever inherited it reaps it
alive() { [ -e "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
for _ in $(seq 20); do
	alive "$GRANDCHILD" || break
	sleep 0.1
done
if alive "$GRANDCHILD"; then
	fail "the action's background process $GRANDCHILD outlived its timeout"
fi
ok "everything the action started was killed with it"

[ "$(wc -l <"$T/action.args")" -eq 2 ] && [ "$(head -1 "$T/action.args")" = "$ARG" ] ||
	fail "the argument did not arrive verbatim: $(head -c 300 "$T/action.args")"
[ ! -e "$T/pwned" ] && [ ! -e "$T/pwned2" ] || fail "something in the argument ran: a shell interpreted it"
[ "$(sed -n 2p "$T/action.args")" = "$T/store/incidents/$(ls "$T/store/incidents" | head -1)" ] ||
	fail "the incident path is not the last argument: $(cat "$T/action.args")"
ok "no shell: the argument arrived verbatim, then the incident path"

[ -e "$T/action.printed" ] || fail "the action could not write all its output before the timeout"
outs=$(grep -c '^action-out-' "$T/daemon.log")
errs=$(grep -c '^action-err-' "$T/daemon.log")
[ "$outs" -eq 8000 ] && [ "$errs" -eq 8000 ] || fail "the log has $outs/8000 stdout and $errs/8000 stderr lines of the action"
ok "the action's output ($((outs + errs)) lines, ~1.6 MiB) is in the daemon's log"

stop_daemon
"$FRCTL" --store "$T/store" dump --format json >"$T/dump.json"
got=$(jq -r --arg p "actionmark-$$-" 'select(.type == "exec" and (.argv | length) == 2 and (.argv[1] | startswith($p))) | .argv[1]' "$T/dump.json" | sort -u | wc -l)
[ "$got" -eq "$n" ] || fail "only $got of the $n markers exec'd while the action ran are stored"
[ "$slowest" -le 1000 ] || fail "status took $slowest ms while the action ran"
ok "recording went on: all $n markers stored, status within $slowest ms"
