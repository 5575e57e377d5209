#!/bin/bash
# What changed (issue 45): frctl report compares its window with the
# minutes before it.  A steady workload runs 12 s: fr-steady (control,
# ctl_spin 30 % of a CPU) and fr-worker (steady_fn 20 %), each on a fixed
# 100 ms schedule.  Then fr-worker changes: a new function hog_fn takes
# another 30 %, a thread of it locks 1 GiB into memory and then fsyncs a
# file on a disk throttled for it (a slow device); a new process
# fr-newproc (new_fn, 20 %) starts.  6 s later a freeze (before 8 s)
# makes an incident, and its report is compared, by default, with the
# store's 9 s before it.
#   - each change is listed, in the text's "What changed" and the JSON,
#     with the right direction and its numbers: hog_fn's CPU up from
#     nothing, fr-newproc new, fr-worker's fsync waits new, memory
#     available down by about 1 GiB (and when it stepped);
#   - nothing is listed of what did not change: fr-steady, ctl_spin,
#     steady_fn (false positives are the failure this guards against);
#   - the page has the section, and a differential flame graph (headless
#     Chromium): hog_fn all gain (red), ctl_spin about the same;
#   - --no-baseline leaves the section out; --baseline-since/-until picks
#     a span of the store; a bad baseline option is one line, exit 2.
# Usage: test-what-changed.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"

cat >"$T/work.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
/* spins @ms milliseconds in the function that calls it */
#define SPIN(ms)                                                        \
	do {                                                            \
		long long end = now_ns() + (ms) * 1000000LL;            \
		volatile unsigned long x = 0;                           \
		while (now_ns() < end)                                  \
			for (int i = 0; i < 20000; i++)                 \
				x += i * 7;                             \
	} while (0)
__attribute__((noinline)) void ctl_spin(void) { SPIN(30); }
__attribute__((noinline)) void steady_fn(void) { SPIN(20); }
__attribute__((noinline)) void hog_fn(void) { SPIN(30); }
__attribute__((noinline)) void new_fn(void) { SPIN(20); }

/* phase 2's gigabyte and fsyncs, on a thread of their own: the schedule
 * of the functions above does not move when memory or the disk is slow.
 * The gigabyte is a file already in the page cache, locked: it leaves
 * "memory available" at once.  (Anonymous memory would be the usual
 * way, but this VM's host backs newly touched pages at its own pace,
 * 1 GiB in 1 to 9 s, and the test would time the host.) */
static const char *synced, *gigabyte;
static void *syncer(void *unused)
{
	static char buf[64 << 10];
	int gfd = open(gigabyte, O_RDONLY);
	void *g = gfd >= 0 ? mmap(NULL, 1UL << 30, PROT_READ, MAP_SHARED, gfd, 0) : MAP_FAILED;
	if (g == MAP_FAILED || mlock(g, 1UL << 30) != 0)
		abort();
	int fd = open(synced, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	(void)unused;

	for (unsigned i = 0; fd >= 0; i++)
		if (pwrite(fd, buf, sizeof(buf), (off_t)(i % 16) * sizeof(buf)) > 0)
			fsync(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *role = argv[1], *flag = argc > 2 ? argv[2] : "";
	struct timespec next;
	pthread_t t;
	int changed = 0;

	synced = argc > 3 ? argv[3] : "";
	gigabyte = argc > 4 ? argv[4] : "";

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (!strcmp(role, "control"))
			ctl_spin();
		else if (!strcmp(role, "new"))
			new_fn();
		else {
			steady_fn();
			if (access(flag, F_OK) == 0) {
				if (!changed++)
					pthread_create(&t, NULL, syncer, NULL);
				hog_fn();
			}
		}
		next.tv_nsec += 100000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}
C
gcc -O1 -g -pthread -o "$T/fr-work" "$T/work.c" || fail "gcc failed"
cp "$T/fr-work" "$T/fr-steady"
cp "$T/fr-work" "$T/fr-worker"
cp "$T/fr-work" "$T/fr-newproc"

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
# the fsyncs' waits, a few ms each, recorded
sources = { sched = { offcpu_threshold = "2ms"; }; };
triggers = { rules = (
  { name = "manual"; condition = "manual"; before = "8s"; after = "1s"; }
); };
CONF
# the gigabyte fr-worker locks: a file on disk (tmpfs pages would not
# count as available to begin with), written and synced before the
# daemon starts, so that neither the writing nor its writeback is in
# the baseline; the file fsynced on disk, not tmpfs; the disk made slow
# for fr-worker alone (cgroup v1's blkio throttle, 1 MB/s of writes): a
# slow device
SYNCED=$(mktemp /var/tmp/fr-changed-XXXXXX)
GIGABYTE=$(mktemp /var/tmp/fr-changed-1g-XXXXXX)
trap 'cleanup; rm -f "$SYNCED" "$GIGABYTE"' EXIT
dd if=/dev/zero of="$GIGABYTE" bs=1M count=1024 conv=fsync status=none || fail "could not write $GIGABYTE"
start_daemon "$T/fr.conf"
throttle "$SYNCED" write 1048576

"$T/fr-steady" control & PIDS="$PIDS $!"
"$T/fr-worker" worker "$T/phase2" "$SYNCED" "$GIGABYTE" & PIDS="$PIDS $!"
echo $! >"$BLKIO/cgroup.procs"
sleep 12
touch "$T/phase2"
"$T/fr-newproc" new & PIDS="$PIDS $!"
# the freeze keeps 8 s before it: the change is 6 s into it, the
# baseline (the 9 s before the incident) all steady
sleep 6
id=$("$FRCTL" --store "$T/store" freeze --reason "what changed" | awk '{print $NF; exit}')
for _ in $(seq 100); do
	id=$("$FRCTL" --store "$T/store" incidents --json | jq -r '[.[] | select(.rules == ["manual"])][0].id // empty')
	[ -n "$id" ] && [ -f "$T/store/incidents/$id.fri" ] && break
	sleep 0.1
done
[ -n "$id" ] || fail "no incident from the freeze"

"$FRCTL" --store "$T/store" report --incident "$id" >"$T/report.txt" || fail "report failed"
"$FRCTL" --store "$T/store" report --incident "$id" --format json >"$T/report.json" || fail "report --format json failed"
sed -n '/^What changed/,/^[A-Z]/p' "$T/report.txt" | sed '$d' >"$T/changed.txt"
grep -q '^What changed, against ' "$T/changed.txt" || fail "no 'What changed' section: $(head -20 "$T/report.txt")"
[ -n "${FR_KEEP_REPORT:-}" ] && cp "$T/report.txt" "$T/report.json" "$FR_KEEP_REPORT/"
ok "$(head -1 "$T/changed.txt"); the window: $(jq -c .window "$T/report.json")"
# the JSON: documented fields
jq -e '(.window.since | type) == "string" and (.baseline.records > 0) and (.changes | type) == "array" and
	all(.changes[]; (.kind | type) == "string" and (.subject | type) == "string" and
	    (.direction | type) == "string" and (.score | type) == "number" and (.text | type) == "string")' \
	"$T/report.json" >/dev/null || fail "the JSON lacks its documented fields: $(head -c 600 "$T/report.json")"
# in_text SUBSTRING: a line of the text's list (at most 12) has it
in_text() { grep -qF -- "$1" "$T/changed.txt"; }
change() { jq -c "[.changes[] | select($1)][0] // empty" "$T/report.json"; }

c=$(change '.kind == "cpu_function" and (.subject | startswith("hog_fn"))')
[ -n "$c" ] && jq -e '.direction == "up" and .before.count <= 2 and .now.count >= 20' <<<"$c" >/dev/null ||
	fail "hog_fn's CPU is not listed as up from nothing: ${c:-none}; $(cat "$T/changed.txt")"
in_text "hog_fn" || fail "hog_fn is not in the text's list: $(cat "$T/changed.txt")"
ok "hog_fn: $(jq -r .text <<<"$c")"

c=$(change '.kind == "process" and .subject == "fr-newproc"')
[ -n "$c" ] && jq -e '.direction == "new" and .now.count >= 10' <<<"$c" >/dev/null ||
	fail "fr-newproc is not listed as new: ${c:-none}"
in_text "fr-newproc" || fail "fr-newproc is not in the text's list: $(cat "$T/changed.txt")"
ok "fr-newproc: $(jq -r .text <<<"$c")"

c=$(change '.kind == "wait" and .subject == "off-CPU fr-worker fsync"')
[ -n "$c" ] && jq -e '(.direction == "new" or .direction == "more") and .now.count >= 20 and .before.count == 0' \
	<<<"$c" >/dev/null || fail "fr-worker's fsync waits are not listed as new: ${c:-none}; $(jq -c '[.changes[] | select(.kind == "wait")]' "$T/report.json")"
in_text "fr-worker fsync" || fail "the fsync waits are not in the text's list: $(cat "$T/changed.txt")"
ok "fsync: $(jq -r .text <<<"$c")"

c=$(change '.kind == "metric" and .subject == "memory available"')
[ -n "$c" ] && jq -e '.direction == "down" and (.before.median - .now.median) > 800 and (.before.median - .now.median) < 1400 and
	(.at | type) == "string"' <<<"$c" >/dev/null || fail "memory available is not listed down by ~1 GiB: ${c:-none}"
in_text "memory available" || fail "memory is not in the text's list: $(cat "$T/changed.txt")"
ok "memory: $(jq -r .text <<<"$c")"

# the page: the section, and the differential flame graph in Chromium
"$FRCTL" --store "$T/store" report --incident "$id" --format html -o "$T/report.html" || fail "report --format html failed"
grep -q '<section id="changed">' "$T/report.html" && grep -qE '<li class="up">CPU function up +hog_fn' "$T/report.html" ||
	fail "the page has no 'What changed' with hog_fn up"
mkdir -p "$BUILD/test-artifacts"
SHOT="$BUILD/test-artifacts/what-changed.png"
rm -f "$SHOT"
/usr/bin/python3 "$(dirname "$0")/../tools/page-check.py" "$T/report.html" "$T/chromium" --screenshot "$SHOT" \
	--size 1400,2600 >"$T/page.json" || fail "page-check failed: $(tail -5 "$T/chromium/console.log" 2>/dev/null)"
/usr/bin/python3 - "$T/page.json" "$T/chromium/dom.html" <<'PY' || fail "the differential flame graph is not right (above)"
import json, re, sys
page = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
bad = []
if page['chromium_exit'] != 0 or page['console'] or page['requests'] or not page['ready']:
    bad.append('chromium: exit %s, console %s, requests %s, ready %s' % (
        page['chromium_exit'], page['console'][:3], page['requests'][:3], page['ready']))
m = re.search(r'<svg[^>]*class="flame"[^>]*data-kind="cpu_diff".*?</svg>', dom, re.S)
frames = {}
if not m:
    bad.append('no differential flame graph drawn')
else:
    for g in re.finditer(r'<g [^>]*data-name="([^"]*)"[^>]*>\s*<rect [^>]*fill="([^"]*)"', m.group(0)):
        d = re.search(r'data-delta="([-0-9.]+)"', g.group(0))
        frames.setdefault(g.group(1).split('+')[0], (float(d.group(1)) if d else None, g.group(2)))
    def check(name, lo, hi, hue):
        f = frames.get(name)
        if not f or f[0] is None or not lo <= f[0] <= hi or (hue is not None and not f[1].startswith('hsl(%d,' % hue)):
            bad.append('%s: delta and colour %s, want %s..%s, hue %s' % (name, f, lo, hi, hue))
    check('hog_fn', 0.9, 1.0, 2)        # all gain: red
    check('ctl_spin', -0.5, 0.5, None)  # about the same
for b in bad:
    print('FAIL:', b)
print('ok: differential flame graph: hog_fn %s, ctl_spin %s' % (frames.get('hog_fn'), frames.get('ctl_spin')))
sys.exit(1 if bad else 0)
PY
ok "page: 'What changed' section, hog_fn red in the differential flame graph ($SHOT)"

# nothing of what did not change
bad=$(jq -c '[.changes[] | select((.subject | test("fr-steady|ctl_spin|steady_fn")))]' "$T/report.json")
[ "$bad" = "[]" ] || fail "unchanged work listed as a change: $bad"
ok "fr-steady, ctl_spin and steady_fn: not listed ($(jq '.changes | length' "$T/report.json") changes in all)"
# nor the idle waits of kernel threads, which move with any load (the
# comparison once listed 8 of them among 21 changes)
bad=$(jq -c '[.changes[] | select(.kind == "wait" and (.subject | test("kernel thread.*(kworker|ksoftirqd|rcu_|migration)")))]' "$T/report.json")
[ "$bad" = "[]" ] || fail "idle waits of kernel threads listed as changes: $bad"
ok "no kernel thread's idle wait listed"

# the options
"$FRCTL" --store "$T/store" report --incident "$id" --no-baseline >"$T/none.txt"
grep -q '^What changed' "$T/none.txt" && fail "--no-baseline still compares"
since=$(jq -r .baseline.since "$T/report.json")
until=$(jq -r .baseline.until "$T/report.json")
"$FRCTL" --store "$T/store" report --incident "$id" --baseline-since "$since" --baseline-until "$until" --format json \
	>"$T/explicit.json" || fail "--baseline-since/--baseline-until failed"
# (a wait is stamped when it began and written when it ended: one that
# began in the span may reach the store between the two reports)
jq -e --slurpfile d "$T/report.json" '(.baseline.records - $d[0].baseline.records | fabs) <= 5 and
	([.changes[].subject] == [$d[0].changes[].subject])' "$T/explicit.json" >/dev/null ||
	fail "the same span given explicitly compares otherwise: $(jq -c '[.baseline, [.changes[].subject]]' "$T/report.json") vs $(jq -c '[.baseline, [.changes[].subject]]' "$T/explicit.json")"
# against itself (--baseline-incident): the same records on both sides,
# so nothing changed (restarts in the window were listed once, as they
# are in the baseline too)
"$FRCTL" --store "$T/store" report --incident "$id" --baseline-incident "$id" --format json >"$T/self.json" ||
	fail "--baseline-incident failed"
jq -e '.baseline.records > 0 and .baseline == .window and (.changes | length) == 0' "$T/self.json" >/dev/null ||
	fail "the incident against itself: $(jq -c '[.window, .baseline, [.changes[].text]]' "$T/self.json" | cut -c1-600)"
out=$("$FRCTL" --store "$T/store" report --last 5s --baseline-since yesterday-ish 2>&1) && fail "a bad --baseline-since was taken"
[ $? -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q -- '--baseline-since: invalid time' <<<"$out" ||
	fail "a bad --baseline-since: want one line and exit 2, got: $out"
ok "--no-baseline, --baseline-since/--baseline-until, --baseline-incident (itself: $(jq '.changes | length' "$T/self.json") changes), a bad value: $out"
