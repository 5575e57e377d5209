#!/bin/bash
# Who held it up (issue 46): the waker of each wait over the off-CPU
# threshold, in the woken thread's offcpu record, with the shipped
# sources (waits over 1 s):
#  (a) fr-wait blocks 1.5 s in read() on a pipe that fr-writer writes
#      after a sleep: its waker is fr-writer (pid), a task, its stack
#      through the kernel's pipe write and write() up to fr_send <- main;
#  (b) a thread blocks on a mutex its process's main thread holds for
#      1.5 s: its waker is the main thread (tid), its stack through
#      futex_wake, glibc's unlock (pthread_mutex_unlock's own code) and
#      fr_unlock <- main;
#  (c) dd reads 2 MiB with O_DIRECT from a disk throttled to 1 MB/s for
#      it alone (cgroup v1 blkio): its wait's waker is the I/O's
#      completion, an interrupt ("irq" or "softirq"), named by the
#      completion's frames (blk_mq_end_request, bio end_io), not the
#      task it interrupted;
#  (d) fr-client waits on fr-front, which waits on fr-back, which sleeps
#      1.5 s (unix sockets): frctl report prints the chain in order,
#      client <- front, which waited in recvfrom <- back, which waited in
#      clock_nanosleep <- [timer];
#  and text dump says "woken by" on the offcpu line.
# Usage: test-wakers.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

DIRECT=$(mktemp /var/tmp/fr-wakers-XXXXXX)
trap 'cleanup; rm -f "$DIRECT"' EXIT

cat >"$T/wait.c" <<'C'
#include <unistd.h>
__attribute__((noinline)) int fr_wait(int fd)
{
	char c;
	return (int)read(fd, &c, 1);
}
int main(void)
{
	return fr_wait(0) < 0;
}
C
cat >"$T/writer.c" <<'C'
#include <unistd.h>
/* the result used after the call: not a tail call, its frame stays */
__attribute__((noinline)) int fr_send(void)
{
	volatile int r = (int)write(1, "x", 1);
	return r;
}
int main(void)
{
	usleep(1500000);
	return fr_send() != 1;
}
C
cat >"$T/mutex.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
__attribute__((noinline)) void fr_locked_wait(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
}
static void *worker(void *a)
{
	fr_locked_wait();
	return a;
}
__attribute__((noinline)) int fr_unlock(void)
{
	volatile int r = pthread_mutex_unlock(&m);
	return r;
}
int main(void)
{
	pthread_t t;
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, worker, NULL);
	usleep(1500000);
	int r = fr_unlock();
	pthread_join(t, NULL);
	return r;
}
C
gcc -O2 -o "$T/fr-wait" "$T/wait.c" || fail "gcc failed"
gcc -O2 -o "$T/fr-writer" "$T/writer.c" || fail "gcc failed"
gcc -O2 -pthread -o "$T/fr-mutex" "$T/mutex.c" || fail "gcc failed"
cp /usr/bin/python3 "$T/fr-client"
cp /usr/bin/python3 "$T/fr-front"
cp /usr/bin/python3 "$T/fr-back"

# (c)'s disk, throttled for dd alone
dd if=/dev/urandom of="$DIRECT" bs=1M count=2 status=none conv=fsync || fail "cannot write $DIRECT"
throttle "$DIRECT" read 1048576

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
CONF
start_daemon "$T/fr.conf"
since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)

# (a), (b) and (c) at once: 1.5-2 s each
"$T/fr-writer" | "$T/fr-wait" & PIDS="$PIDS $!"
"$T/fr-mutex" & PIDS="$PIDS $!"
sh -c 'echo $$ >'"$BLKIO"'/cgroup.procs && exec dd if='"$DIRECT"' of=/dev/null bs=2M count=1 iflag=direct status=none' & PIDS="$PIDS $!"
# (d): back and front listen, the client asks
export FR_SOCKS=$T
"$T/fr-back" -c '
import os, socket, time
s = socket.socket(socket.AF_UNIX)
s.bind(os.environ["FR_SOCKS"] + "/back.sock")
s.listen()
c, _ = s.accept()
c.recv(1)
time.sleep(1.5)
c.send(b"b")
' & PIDS="$PIDS $!"
"$T/fr-front" -c '
import os, socket
s = socket.socket(socket.AF_UNIX)
s.bind(os.environ["FR_SOCKS"] + "/front.sock")
s.listen()
c, _ = s.accept()
r = c.recv(1)
b = socket.socket(socket.AF_UNIX)
b.connect(os.environ["FR_SOCKS"] + "/back.sock")
b.send(r)
c.send(b.recv(1))
' & PIDS="$PIDS $!"
for _ in $(seq 50); do
	[ -S "$T/back.sock" ] && [ -S "$T/front.sock" ] && break
	sleep 0.1
done
"$T/fr-client" -c '
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["FR_SOCKS"] + "/front.sock")
s.send(b"q")
s.recv(1)
' || fail "the client's request failed"
for p in $PIDS; do wait "$p" || fail "a workload process failed"; done
PIDS=

# every record written: the waits ended seconds ago
for _ in $(seq 20); do
	sleep 0.5
	"$FRCTL" --store "$T/store" dump --since "$since" --format json --type offcpu >"$T/waits.json"
	[ "$(jq -s '[.[] | select(.comm == "fr-client" or .comm == "fr-wait" or .comm == "dd")] | length' \
		"$T/waits.json")" -ge 3 ] && break
done
"$FRCTL" --store "$T/store" status --json >"$T/st.json"
ok "wakers joined: $(jq -c '.wakers' "$T/st.json")"

# the waker of @1's offcpu record as "kind label pid tid | user frames | kernel frames"
waker() {
	jq -r --arg comm "$1" 'select(.comm == $comm and .waker) | .waker |
		[.kind, .label, .pid, .tid] + ["|"] +
		[.stack[.kernel_frames:][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] + ["|"] +
		[.stack[:.kernel_frames][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] | join(" ")' \
		"$T/waits.json" | head -1
}

# (a)
a=$(waker fr-wait)
[ -n "$a" ] || fail "(a) fr-wait's wait has no waker: $(jq -c 'select(.comm == "fr-wait")' "$T/waits.json")"
read -r kind label pid _ <<<"$a"
[ "$kind" = task ] && [ "$label" = fr-writer ] || fail "(a) fr-wait's waker is not the task fr-writer: $a"
grep -Eq '\| write fr_send main ' <<<"$a" || fail "(a) fr-writer's stack is not write <- fr_send <- main: $a"
grep -Eq 'pipe_write .*vfs_write' <<<"$a" || fail "(a) fr-writer's kernel stack is not a pipe's write: $a"
writer=$pid
ok "(a) fr-wait's read woken by fr-writer[$pid]: $a"

# (b): the blocked thread is not the process's main thread
b=$(jq -r 'select(.comm == "fr-mutex" and .tid != .pid and .waker) | .waker |
	[.kind, (.pid | tostring), (.tid | tostring)] + ["|"] +
	[.stack[.kernel_frames:][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] + ["|"] +
	[.stack[:.kernel_frames][] | (.sym // "?") | sub("\\+0x[0-9a-f]+$"; "")] | join(" ")' "$T/waits.json" | head -1)
[ -n "$b" ] || fail "(b) the blocked thread's wait has no waker: $(jq -c 'select(.comm == "fr-mutex")' "$T/waits.json")"
read -r kind pid tid _ <<<"$b"
[ "$kind" = task ] && [ "$pid" = "$tid" ] || fail "(b) the waker is not fr-mutex's main thread: $b"
grep -Eq '(pthread_mutex_unlock|__pthread_mutex_unlock_usercnt) fr_unlock main ' <<<"$b" ||
	fail "(b) the waker is not at pthread_mutex_unlock <- fr_unlock <- main: $b"
grep -q 'futex_wake' <<<"$b" || fail "(b) the waker's kernel stack is not a futex wake: $b"
ok "(b) the thread blocked on the mutex woken by its main thread [$pid]: $b"

# (c)
c=$(waker dd)
[ -n "$c" ] || fail "(c) dd's wait has no waker: $(jq -c 'select(.comm == "dd")' "$T/waits.json")"
read -r kind label _ <<<"$c"
case $kind in irq | softirq) ;; *) fail "(c) dd's waker is not an interrupt: $c" ;; esac
[ "${label#\[}" != "$label" ] || fail "(c) dd's waker is labelled as a task: $c"
grep -Eq 'blk_mq_end_request|blk_update_request|bio_endio|end_io' <<<"$c" ||
	fail "(c) dd's waker's frames are not an I/O completion: $c"
[ "$(cut -d'|' -f2 <<<"$c" | tr -d ' ')" = "" ] || fail "(c) an interrupt's waker has user frames: $c"
ok "(c) dd's direct read woken by the I/O's completion: $c"

# (d) the chain, in order, under fr-client's wait
"$FRCTL" --store "$T/store" report --since "$since" --no-baseline >"$T/report.txt" 2>&1 || fail "report failed"
awk '/fr-client\[/ && /offcpu/ { on = 1; next } on && /^  +[0-9.]+ ?[mun]?s  / { exit } on' "$T/report.txt" >"$T/chain"
grep -q '← woken by fr-front\[' "$T/chain" || fail "(d) the report does not say fr-front woke fr-client: $(cat "$T/report.txt")"
grep -Eq '← which waited 1\.[0-9]+ ?s in recvfrom, woken by fr-back\[' "$T/chain" ||
	fail "(d) the report does not follow fr-front's wait to fr-back: $(cat "$T/chain")"
grep -Eq '← which waited 1\.[0-9]+ ?s in clock_nanosleep, woken by \[timer\]' "$T/chain" ||
	fail "(d) the report does not follow fr-back's sleep to its timer: $(cat "$T/chain")"
order=$(grep -o 'woken by [^[:space:]:]*' "$T/chain" | sed 's/\[[0-9]*\]//' | tr '\n' ' ')
[ "$order" = "woken by fr-front woken by fr-back woken by [timer] " ] || fail "(d) the chain is out of order: $order"
ok "(d) the chain: $(tr -s ' ' <"$T/chain" | cut -c1-160 | tr '\n' '|')"

# the text line
"$FRCTL" --store "$T/store" dump --since "$since" --type offcpu --comm fr-wait | grep -q ', woken by fr-writer\[' ||
	fail "dump's text does not say who woke fr-wait"
ok "text: $("$FRCTL" --store "$T/store" dump --since "$since" --type offcpu --comm fr-wait | head -1)"

# the page: fr-front and fr-back get lanes as wakers, and arrows go from
# fr-front's lane to fr-client's and from fr-back's to fr-front's, drawn
# at the wakeups in Chromium
"$FRCTL" --store "$T/store" report --since "$since" --no-baseline --format html -o "$T/report.html" ||
	fail "report --format html failed"
mkdir -p "$BUILD/test-artifacts"
SHOT="$BUILD/test-artifacts/wakers.png"
rm -f "$SHOT"
/usr/bin/python3 "$(dirname "$0")/../tools/page-check.py" "$T/report.html" "$T/chromium" --screenshot "$SHOT" \
	--size 1400,1200 >"$T/page.json" || fail "page-check failed: $(tail -5 "$T/chromium/console.log" 2>/dev/null)"
jq -e '.chromium_exit == 0 and (.console | length) == 0 and (.requests | length) == 0 and .ready' "$T/page.json" >/dev/null ||
	fail "the page did not draw cleanly: $(jq -c '{chromium_exit, console, requests, ready}' "$T/page.json")"
arrows=$(jq -r '.timeline as $t | ($t.lanes | map({key: (.pid | tostring), value: .name}) | from_entries) as $n |
	[$t.wakes[] | select(.x1 >= $t.x0 and .x1 <= $t.x0 + $t.width and .x1 == .x2 and .y1 != .y2) |
	 "\($n[.from | tostring]) -> \($n[.to | tostring])"] | unique | join(", ")' "$T/page.json")
grep -q 'fr-front -> fr-client' <<<"$arrows" && grep -q 'fr-back -> fr-front' <<<"$arrows" ||
	fail "the page's arrows are not fr-front -> fr-client and fr-back -> fr-front: '$arrows' (lanes: $(jq -c '[.timeline.lanes[] | {name, why}]' "$T/page.json"))"
ok "the page draws the wakeups: $arrows (screenshot: $SHOT)"

# Perfetto: an arrow from fr-writer's wakeup to fr-wait's wait
"$FRCTL" --store "$T/store" dump --since "$since" --format perfetto -o "$T/trace.json" || fail "perfetto dump failed"
python3 "$(dirname "$0")/../tools/validate-trace-event.py" "$T/trace.json" >"$T/validate.out" ||
	fail "Trace Event Format validation: $(cat "$T/validate.out")"
waiter=$(jq -r 'select(.comm == "fr-wait" and .type == "offcpu") | .tid' "$T/waits.json" | head -1)
jq -e --argjson w "$writer" --argjson t "$waiter" '[.traceEvents[] | select(.cat == "wakeup")] as $f |
	[$f[] | select(.ph == "s" and .tid == $w) | .id] as $s |
	[$f[] | select(.ph == "f" and .tid == ($t + 1073741824) and .bp == "e" and (.id as $i | $s | index($i) != null))] |
	length == 1' "$T/trace.json" >/dev/null ||
	fail "perfetto has no flow from fr-writer[$writer] to fr-wait[$waiter]'s wait: $(jq -c '[.traceEvents[] | select(.cat == "wakeup")]' "$T/trace.json" | cut -c1-600)"
ok "perfetto: a flow arrow from fr-writer's wakeup to fr-wait's off-CPU slice"

stop_daemon
echo "wakers: all checks passed"
