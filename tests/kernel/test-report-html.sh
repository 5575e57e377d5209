#!/bin/bash
# frctl report --format html, opened in a real browser: Debian's chromium,
# headless, in a network namespace of its own (no network at all), with
# its console and network log kept (tests/tools/page-check.py).  A daemon
# with the built-in rules (the crash rule: a real SIGSEGV) and waits
# recorded from 50 ms; the crashing process (python3) spins 2 s, sleeps
# 6 x 300 ms, then dereferences NULL.  Its incident's page:
#   - loads with no console error, and no network request at all;
#   - has the crashing process's lane first ("trigger"), with the SIGSEGV
#     as a crash instant at the signal record's time and each of its
#     sleeps as a slice where the record's time puts it (within 1 px per
#     second of window, the x the browser laid out);
#   - a CPU flame graph whose root weighs the window's samples and spans
#     the graph's width; the metrics charts (CPU busy, memory, load), the
#     trigger as a marker;
#   - the tables without JavaScript: the SIGSEGV's record in the HTML;
#   - a bad --format is refused in one line; -o into a missing directory
#     fails, leaving nothing.
# The screenshot is kept: BUILD/test-artifacts/report-html.png (and copied
# to $FR_REPORT_SCREENSHOT when set: tests/tools/report-screenshot.sh).
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
PAGE_CHECK="$HERE/../tools/page-check.py"

command -v chromium >/dev/null || fail "chromium is not installed (scripts/deps.sh installs it)"

cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; };
sources = {
  sched = { offcpu_threshold = "50ms"; };
  syscall = { enabled = true; threshold = "20ms"; };
};
CONF
start_daemon "$T/fr.conf"
"$FRCTL" --config "$T/fr.conf" --store "$T/store" status --json | jq -e '.triggers.rules | has("crash")' >/dev/null ||
	fail "the built-in crash rule is not active"

ulimit -c 0
sleep 1
sh -c 'echo $$ >"$1"; exec /usr/bin/python3 -c "
import ctypes, time
t = time.process_time()
while time.process_time() - t < 2:
    pass
for _ in range(6):
    time.sleep(0.3)
ctypes.string_at(0)"' sh "$T/segv.pid" 2>/dev/null || true
SEGV=$(cat "$T/segv.pid")
ID=
for _ in $(seq 300); do
	"$FRCTL" --store "$T/store" incidents --json >"$T/inc.json" 2>/dev/null || true
	ID=$(jq -r --argjson p "$SEGV" '[.[] | select(any(.triggers[]; .pid == $p))][0].id // empty' "$T/inc.json")
	[ -n "$ID" ] && break
	sleep 0.2
done
[ -n "$ID" ] || fail "no crash incident for python3 $SEGV within 60 s"
ok "SIGSEGV of python3 $SEGV -> incident $ID"

# bad input first: one line, exit 2; nothing written
"$FRCTL" --store "$T/store" report --incident "$ID" --format pdf -o "$T/x.pdf" 2>"$T/err" && fail "--format pdf accepted"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'unknown format' "$T/err" || fail "--format pdf: $(cat "$T/err")"
[ -e "$T/x.pdf" ] && fail "--format pdf wrote a file"
"$FRCTL" --store "$T/store" report --incident "$ID" --format html -o "$T/missing/r.html" 2>"$T/err" &&
	fail "-o into a missing directory succeeded"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "-o into a missing directory: $(cat "$T/err")"
ok "bad --format and an unwritable -o refused in one line"

"$FRCTL" --store "$T/store" report --incident "$ID" --format html -o "$T/report.html" ||
	fail "report --format html failed"
size=$(stat -c %s "$T/report.html")
ok "page written: $size bytes"
# readable without JavaScript: the tables hold the SIGSEGV's record
grep -q '<table class="data">' "$T/report.html" || fail "the page has no table"
grep -qE "signal +python3\[$SEGV\] SIGSEGV" "$T/report.html" ||
	fail "the page's HTML does not show the SIGSEGV (tables for readers without JavaScript)"
grep -qiE '(src|href)="?(https?:)?//' "$T/report.html" && fail "the page refers to something on the network"
ok "tables in the HTML: the SIGSEGV of python3 is there without JavaScript"
# the crash opens the page, before what changed; the baseline's span is
# the incident's own time (its start before its first record once made it
# wrap: "0 records in the 18446744069.055s before the window")
crash_at=$(grep -n '<section id="crash">' "$T/report.html" | head -1 | cut -d: -f1)
changed_at=$(grep -n '<section id="changed">' "$T/report.html" | head -1 | cut -d: -f1)
[ -n "$crash_at" ] && [ -n "$changed_at" ] && [ "$crash_at" -lt "$changed_at" ] ||
	fail "the page does not open with the crash (crash section at line ${crash_at:-none}, what changed at ${changed_at:-none})"
sed -n '/<section id="changed">/,/<\/section>/p' "$T/report.html" | grep -E '[0-9]{5,}(\.[0-9]+)?s' &&
	fail "what changed names a baseline longer than a day"
ok "the crash first, then what changed over a sane span"

# what the records say, independently of the page
"$FRCTL" --store "$T/store" dump --incident "$ID" --format json >"$T/dump.json"
"$FRCTL" --store "$T/store" dump --incident "$ID" --type sample --format json >"$T/samples.json"

mkdir -p "$BUILD/test-artifacts"
SHOT="$BUILD/test-artifacts/report-html.png"
rm -f "$SHOT"
/usr/bin/python3 "$PAGE_CHECK" "$T/report.html" "$T/chromium" --screenshot "$SHOT" >"$T/page.json" ||
	fail "page-check failed: $(tail -5 "$T/chromium/console.log" 2>/dev/null)"
[ -n "${FR_REPORT_SCREENSHOT:-}" ] && cp "$SHOT" "$FR_REPORT_SCREENSHOT"

/usr/bin/python3 - "$T/page.json" "$T/dump.json" "$T/samples.json" "$SEGV" <<'PY' || fail "the page in Chromium is not right (above)"
import json, sys
from datetime import datetime, timezone

page = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
samples = sum(1 for l in open(sys.argv[3]) if l.strip())
pid = int(sys.argv[4])
bad = []

def ns(t):
    # RFC 3339 with nanoseconds: the fraction by hand (datetime keeps µs)
    base, frac = t.rstrip('Z').split('.')
    sec = datetime.fromisoformat(base).replace(tzinfo=timezone.utc).timestamp()
    return int(sec) * 10**9 + int(frac.ljust(9, '0'))

if page['chromium_exit'] != 0:
    bad.append('chromium exited %d' % page['chromium_exit'])
# every console message is one too many: errors, exceptions and logs
# alike (Chromium logs them at one level)
if page['console']:
    bad.append('console messages: %s' % page['console'][:5])
if page['requests']:
    bad.append('network requests: %s' % page['requests'][:10])
if not page['ready']:
    bad.append('the page did not finish drawing (no data-ready)')
if not page.get('screenshot'):
    bad.append('no screenshot')

t0 = min(ns(r['time']) for r in recs)
t1 = max(ns(r['time']) + r.get('duration_ns', 0) for r in recs)
window_s = (t1 - t0) / 1e9
tol = max(1.0, window_s)  # 1 px per second of window
tl = page['timeline']
if not tl or not tl['lanes']:
    bad.append('no timeline lanes')
else:
    lane = tl['lanes'][0]
    if lane['pid'] != pid or lane['why'] != 'trigger':
        bad.append('first lane is %s %s, not the crashing process %d (trigger)' % (lane['pid'], lane['why'], pid))
    x_of = lambda t_us: tl['x0'] + t_us / 1e6 * tl['px_per_s']
    sleeps = [r for r in recs if r['pid'] == pid and r['type'] == 'offcpu']
    if len(sleeps) < 5:
        bad.append('only %d offcpu records of the process in the window' % len(sleeps))
    for r in sleeps:
        t_us = (ns(r['time']) - t0) / 1000
        s = [s for s in lane['slices'] if 'offcpu' in s['kind'] and abs(s['t_us'] - t_us) <= 1000]
        if not s:
            bad.append('no offcpu slice at %.0f us in the trigger lane' % t_us)
        elif abs(s[0]['x'] - x_of(t_us)) > tol:
            bad.append('offcpu slice at %.0f us drawn at x=%.1f, expected %.1f +- %.1f' % (t_us, s[0]['x'], x_of(t_us), tol))
    sig = [r for r in recs if r['pid'] == pid and r['type'] == 'signal' and r.get('signal') == 'SIGSEGV']
    if not sig:
        bad.append('no SIGSEGV signal record in the window')
    else:
        t_us = (ns(sig[0]['time']) - t0) / 1000
        if not any('crash' in i['kind'] and abs(i['t_us'] - t_us) <= 1000 for i in lane['instants']):
            bad.append('no crash instant at %.0f us on the trigger lane: %s' % (t_us, lane['instants'][:10]))
    if not any('trigger' in m['kind'] for m in tl['markers']):
        bad.append('no trigger marker')
    print('timeline: %d lanes, x0 %.1f, %.2f px/s, window %.1f s; trigger lane: %d slices, %d instants'
          % (len(tl['lanes']), tl['x0'], tl['px_per_s'], window_s, len(lane['slices']), len(lane['instants'])))

cpu = [f for f in page['flames'] if f['kind'] == 'cpu']
if not cpu or not cpu[0]['root']:
    bad.append('no CPU flame graph')
else:
    f = cpu[0]
    if f['root']['v'] != samples or f['total'] != samples:
        bad.append('CPU flame graph root weighs %s (total %s), the window has %d samples' % (f['root']['v'], f['total'], samples))
    if abs(f['root']['width'] - f['width']) > 1:
        bad.append('CPU flame graph root is %s px wide, the graph %s' % (f['root']['width'], f['width']))
    print('cpu flame graph: root %d samples, %.0f px' % (f['root']['v'], f['root']['width']))
groups = [c['group'] for c in page['charts']]
for g in ('CPU busy', 'Memory available', 'Load'):
    if g not in groups:
        bad.append('no %s chart (charts: %s)' % (g, groups))
print('charts: %s; timings %s' % (groups, page['timings']))
for b in bad:
    print('FAIL: ' + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ok "in Chromium: no console error, no request; the crash on the trigger lane, slices in place, flame graph, charts"
ok "screenshot: $SHOT"
