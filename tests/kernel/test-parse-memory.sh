#!/bin/bash
# The parser helper's heap bound, sources.sample.parse_memory (issue 48):
# eight Python processes run by nobody are sampled at 499 Hz under a
# 1 MiB bound, which their unwind and symbol tables pass (2-4 MiB): the
# helper sheds (sampler.unwind.heap_trims > 0), reports its heap
# (sampler.parser.heap_bytes), and still unwinds
# and names their stacks (at least half whole; a sample of the last
# second of their run named down to the interpreter).  Then the bound is
# raised to 256 MiB by SIGHUP and the same workload sheds nothing more:
# the sheds were the bound's.  The heap is measured by the allocator in
# use, ASan's in the sanitized run (where glibc's mallinfo2() answers
# zeros: the bound was never met there before daemon/heap.c).
# Usage: test-parse-memory.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || fail "$PYTHON is missing (Debian package python3)"
conf() {
	cat >"$T/fr.conf" <<CONF
store = { size = "16M"; segments = 4; sync_interval = "200ms"; };
sources = { sample = { hz = 499; parse_memory = "$1"; }; };
CONF
}
status() { "$FRCTL" --store "$T/store" status --json; }
# workload SECONDS: eight Python processes on the CPU for SECONDS, each
# through a few C modules (json, decimal, re), as nobody; waits for them
workload() {
	local i pids=
	for i in $(seq 8); do
		# (setpriv itself, not as_nobody: $! is then Python's pid)
		setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$PYTHON" -c "
import decimal, json, re, sys, time
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    n += len(json.dumps({'a': [decimal.Decimal(n) * 2 for _ in range(3)]}, default=str))
    re.match('a+b', 'aaab')
" "$1" &
		pids="$pids $!"
		PIDS="$PIDS $!"
	done
	for i in $pids; do wait "$i" || fail "a Python worker failed"; done
	PIDS=
	LAST_PID=$i
}
chmod 0755 "$T"
conf 1M
start_daemon "$T/fr.conf"
workload 6
sleep 1.5 # the next trim's stats
status >"$T/st.json"
jq -e '.sampler.unwind.heap_trims > 0' "$T/st.json" >/dev/null ||
	fail "the helper never shed under a 1 MiB bound: $(jq -c '.sampler | {unwind: .unwind | {stacks, heap_trims, cached_processes}, heap_bytes: .parser.heap_bytes, cache_bytes: .symbols.cache_bytes}' "$T/st.json")"
jq -e '.sampler.parser.heap_bytes > 0' "$T/st.json" >/dev/null || fail "sampler.parser.heap_bytes is not reported"
jq -e '.sampler.unwind.stacks > 0 and .sampler.unwind.complete * 2 >= .sampler.unwind.stacks' "$T/st.json" >/dev/null ||
	fail "fewer than half the stacks unwound whole under the bound: $(jq -c '.sampler.unwind | {stacks, complete, truncated, failed}' "$T/st.json")"
# the last worker's samples of its last second, after a second of sheds:
# still unwound to the interpreter's caller and named
wait_for_record ".type == \"sample\" and .pid == $LAST_PID and any(.stack[]?; .sym // \"\" | test(\"^PyEval_EvalCode([+]|\$)\"))"
trims=$(jq .sampler.unwind.heap_trims "$T/st.json")
ok "1 MiB: $trims sheds, stacks $(jq -c '.sampler.unwind | {stacks, complete}' "$T/st.json"), symbol tables $(jq .sampler.symbols.cache_bytes "$T/st.json") B, helper heap $(jq .sampler.parser.heap_bytes "$T/st.json") B at the last trim"

conf 256M
n=$(grep -c 'Configuration reload' "$T/daemon.log" || true)
kill -HUP "$DPID"
for _ in $(seq 50); do
	[ "$(grep -c 'Configuration reload' "$T/daemon.log" || true)" -gt "$n" ] && break
	sleep 0.1
done
[ "$(grep -c 'Configuration reloaded' "$T/daemon.log" || true)" -gt 0 ] || fail "no reload logged within 5 s"
sleep 1.5 # the bound goes with the next trim
before=$(status | jq .sampler.unwind.heap_trims)
workload 4
sleep 1.5
status >"$T/st.json"
after=$(jq .sampler.unwind.heap_trims "$T/st.json")
[ "$after" -eq "$before" ] || fail "the helper shed $((after - before)) times more under a 256 MiB bound (heap $(jq .sampler.parser.heap_bytes "$T/st.json") B)"
ok "256 MiB after SIGHUP: no shed over the same workload (helper heap $(jq .sampler.parser.heap_bytes "$T/st.json") B)"
