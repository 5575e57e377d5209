#!/bin/bash
# Waits that matter first (issue 45): an offcpu record says the task state
# it blocked in, and frctl report lists latencies, not waits idle by design.
# With the shipped sources (off-CPU waits over 1 s), three processes wait:
#   - fr-reader blocks 2 s in read() on a socket its peer answers late;
#   - dd's fsync() of 1 MiB waits ~4 s in D state, on a disk throttled to
#     256 KB/s for it alone (cgroup v1 blkio: a slow device);
#   - fr-idler waits 10 s in epoll_wait() with nothing to do.
# Then:
#   - the records: fsync's state is "D", read's and epoll_wait's "S";
#   - "Longest off-CPU" leads with fsync then read; it lists neither the
#     epoll_wait nor any kernel thread (this machine's kworkers and
#     ksoftirqds sleep seconds between work: the quickstart's report on
#     an idle machine led with them), which are counted on a line apart;
#   - the page gives dd a lane, and fr-idler no "slowest" one (those are
#     the latencies': its 10 s epoll_wait made it the slowest).
# Usage: test-wait-kinds.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

SYNCED=$(mktemp /var/tmp/fr-waits-XXXXXX)
trap 'cleanup; rm -f "$SYNCED"' EXIT
throttle "$SYNCED" write 262144

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
CONF
start_daemon "$T/fr.conf"

cp /usr/bin/python3 "$T/fr-reader"
cp /usr/bin/python3 "$T/fr-idler"
idle() { "$T/fr-idler" -c 'import select; select.epoll().poll(10)' & PIDS="$PIDS $!"; }
idle
"$T/fr-reader" -c '
import os, socket, time
a, b = socket.socketpair()
if os.fork() == 0:
    time.sleep(2)
    b.send(b"x")
    os._exit(0)
a.recv(1)
os.wait()
' & PIDS="$PIDS $!"
# dd in the throttled group: writes to the page cache at once, then its
# fsync waits for the disk
sh -c 'echo $$ >'"$BLKIO"'/cgroup.procs && exec dd if=/dev/zero of='"$SYNCED"' bs=1M count=1 conv=fsync status=none' &
PIDS="$PIDS $!"
sleep 11
# (CI run 68, once in ~40 runs: the idler's wait had no record at all;
# nothing counted it: sched dropped 0, untracked 0, one waker orphaned.
# Said with what the store and the counters held, then tried once more)
IDLER='select(.type == "offcpu" and .comm == "fr-idler" and .syscall == "epoll_wait")'
if ! has_record "$IDLER"; then
	echo "note: fr-idler's 10 s epoll_wait has no record (try 1 of 2)." \
		"Its waits: $(jq -c 'select(.type == "offcpu" and .comm == "fr-idler") | [.tid, .syscall, .state, .duration_ns]' "$T/wait.json" | paste -sd' ')." \
		"Counters: $("$FRCTL" --store "$T/store" status --json | jq -c '{sched: .sources.sched, offcpu: .offcpu_stacks, wakers: .wakers}')." \
		"The switch program's runs the kernel skipped (recursion): $(bpftool prog list --json 2>&1 | jq -c '[.[] | select(.name == "fr_switch") | .recursion_misses // 0]' 2>&1)" >&2
	idle
	sleep 11
	wait_for_record "$IDLER"
fi

"$FRCTL" --store "$T/store" dump --last 1m --type offcpu --format json >"$T/offcpu.json"
st() { jq -r -s --arg c "$1" --arg s "$2" '[.[] | select(.comm == $c and .syscall == $s)] | max_by(.duration_ns) | "\(.state) \(.duration_ns)"' "$T/offcpu.json"; }
read -r fs fd <<<"$(st dd fsync)"
read -r rs rd <<<"$(st fr-reader recvfrom)"
read -r es edur <<<"$(st fr-idler epoll_wait)"
[ "$fs" = D ] && [ "$fd" -ge 2000000000 ] || fail "dd's fsync: state $fs, ${fd} ns (want D, >= 2 s): $(jq -c 'select(.comm == "dd")' "$T/offcpu.json" | head -3)"
[ "$rs" = S ] && [ "$rd" -ge 1900000000 ] || fail "fr-reader's recvfrom: state $rs, ${rd} ns: $(jq -c 'select(.comm == "fr-reader")' "$T/offcpu.json" | head -3)"
[ "$es" = S ] && [ "$edur" -ge 9000000000 ] || fail "fr-idler's epoll_wait: state $es, ${edur} ns"
ok "records: fsync D $((fd / 1000000)) ms, recvfrom S $((rd / 1000000)) ms, epoll_wait S $((edur / 1000000)) ms"

"$FRCTL" --store "$T/store" report --last 1m --no-baseline >"$T/report.txt"
sed -n '/^Longest off-CPU/,/off-CPU time by call path/p' "$T/report.txt" | grep -E '^ +[0-9.]+(ms|s) ' >"$T/longest.txt" ||
	fail "no longest off-CPU waits: $(cat "$T/report.txt")"
sed -n 1p "$T/longest.txt" | grep -q 'dd\[[0-9]*\] blocked (D) in fsync()' ||
	fail "the longest wait is not dd's fsync in D: $(cat "$T/longest.txt")"
sed -n 2p "$T/longest.txt" | grep -q 'fr-reader\[[0-9]*\] blocked in recvfrom()' ||
	fail "the second is not fr-reader's recvfrom: $(cat "$T/longest.txt")"
grep -q 'epoll_wait' "$T/longest.txt" && fail "the idle epoll_wait is listed: $(cat "$T/longest.txt")"
# kernel threads: their names, from the records of kernel threads
kthreads=$(jq -r 'select(.kernel_thread == true) | .comm' "$T/offcpu.json" | sort -u)
[ -n "$kthreads" ] || fail "no kernel thread waited over 1 s here: the check below would prove nothing"
# (the waiting task is the line's first name, after the time and CPU;
# "woken by [kworker] ..." names a waker, not a wait)
while read -r k; do
	grep -qF "offcpu   $k[" "$T/longest.txt" && fail "kernel thread $k's idle wait is listed: $(cat "$T/longest.txt")"
done <<<"$kthreads"
grep -q '^Off-CPU waits idle by design, not listed: [0-9]' "$T/report.txt" || fail "no line counts the idle waits"
ok "report: $(head -2 "$T/longest.txt" | sed 's/  */ /g' | paste -sd';'); not listed: epoll_wait and $(wc -l <<<"$kthreads") kernel threads ($(grep '^Off-CPU waits idle' "$T/report.txt" | sed 's/ (.*//'))"

# the page: the slowest lanes are the latencies'
"$FRCTL" --store "$T/store" report --last 1m --no-baseline --format html -o "$T/report.html"
[ -n "${FR_KEEP_REPORT:-}" ] && cp "$T/report.html" "$T/report.txt" "$FR_KEEP_REPORT/"
# (read with Python: the page's flame graph nests two levels a frame, and
# jq 1.6 refuses documents nested over 256 deep, as one with a stack of
# 128 frames on the machine is)
lanes=$(grep -o '<script type="application/json" id="fr-data">.*</script>' "$T/report.html" | sed 's/^<script[^>]*>//; s/<\/script>$//' |
	/usr/bin/python3 -c 'import json, sys
for lane in json.load(sys.stdin)["lanes"]:
    print(lane["why"], lane["name"])')
grep -q ' dd$' <<<"$lanes" || fail "dd has no lane: $(paste -sd, <<<"$lanes")"
# (it may be among the busiest, for its start's samples)
grep -q '^slowest fr-idler$' <<<"$lanes" && fail "the idle fr-idler's 10 s epoll_wait made it a slowest lane: $(paste -sd, <<<"$lanes")"
ok "page: lanes $(paste -sd, <<<"$lanes"); fr-idler not among the slowest"
