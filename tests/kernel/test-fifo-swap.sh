#!/bin/bash
# A user who cannot stall the daemon (issue 42): nobody maps code from a
# file of theirs, lets the daemon read its maps, then puts a FIFO where
# the file was and runs the same code from an anonymous copy, then from
# another file at the same address (tests/helpers/fr-fifo-swap.c).  The
# daemon opens mapped files only through /proc/PID/map_files, never by
# path: status answers within 1 s throughout, no record is dropped, the
# FIFO is never opened (its frames stay unnamed), and the other file is
# refused and counted (symbols.files_refused).
# Usage: test-fifo-swap.sh BUILD_DIR HELPERS_DIR
BUILD=$1
HELPERS=$2
. "$(dirname "$0")/lib.sh"

SWAP=
# a daemon stuck opening the FIFO does not see SIGTERM (a signalfd):
# SIGKILL it, after the attacker
cleanup_swap() {
	[ -n "$SWAP" ] && kill -KILL "$SWAP" 2>/dev/null
	if [ -n "$DPID" ] && ! timeout 1 "$FRCTL" --store "$T/store" status >/dev/null 2>&1; then
		kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
		DPID=
	fi
	cleanup
}
trap cleanup_swap EXIT

chmod 0755 "$T"
mkdir -m 0755 "$T/nobody"
chown 65534:65534 "$T/nobody"
cp "$HELPERS/fr-fifo-swap" "$T/fr-fifo-swap"
chmod 0755 "$T/fr-fifo-swap"
cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 97; }; };
CONF
start_daemon "$T/fr.conf"

dropped() { jq '[.per_cpu[].dropped] | add' "$T/st.json"; }
status() { timeout 1 "$FRCTL" --store "$T/store" status --json >"$T/st.json"; }
status || fail "no status before the attack"
D0=$(dropped)

as_nobody "$T/fr-fifo-swap" "$T/nobody" 3 >"$T/swap.out" 2>&1 &
SWAP=$!
# status every 0.2 s until the helper is done, each answered within 1 s
n=0
while kill -0 "$SWAP" 2>/dev/null; do
	status || fail "status did not answer within 1 s (check $n, fr-fifo-swap at: $(tail -1 "$T/swap.out"))"
	n=$((n + 1))
	sleep 0.2
done
wait "$SWAP" || fail "fr-fifo-swap failed: $(cat "$T/swap.out")"
SWAP=
grep -q remapped "$T/swap.out" || fail "fr-fifo-swap did not swap and remap: $(cat "$T/swap.out")"
[ -p "$T/nobody/victim" ] || fail "no FIFO in the victim's place"
ok "status answered within 1 s $n times while nobody swapped its mapped file for a FIFO"
sleep 0.5
status || fail "no status after the attack"
D1=$(dropped)
[ "$D1" -eq "$D0" ] || fail "records dropped during the attack: $D0 before, $D1 after"
jq -e '.sampler.symbols.files_refused >= 1 and .sampler.symbols.files_unopened >= 2' "$T/st.json" >/dev/null ||
	fail "the swapped files were not counted: $(jq -c '.sampler.symbols | {files_unopened, files_refused}' "$T/st.json")"
ok "no records dropped ($D1); counted: $(jq -c '{symbols: (.sampler.symbols | {files_unopened, files_refused}), unwind: (.sampler.unwind | {files_refused})}' "$T/st.json")"
grep -qi 'fifo' "$T/daemon.log" && fail "the daemon logged about the FIFO: $(grep -i fifo "$T/daemon.log")"
stop_daemon
echo "fifo-swap: all checks passed"
