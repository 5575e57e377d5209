#!/usr/bin/python3
"""Opens a frctl report page in headless Chromium, the way a reader's
browser would, with the network cut (a network namespace of its own, no
interface up), and says what it found, as one JSON object on stdout:

  console      the page's console messages, every one (errors, uncaught
               exceptions, warnings, logs: Chromium logs all at one level)
  requests     every URL the page asked for (the network log's requests
               with the page's origin), but its own file:// and data:/blob:
  browser_requests  how many the browser made on its own (updates, time)
  ready        the page's script finished drawing (<html data-ready="1">)
  timings      data-dcl-ms, data-fp-ms, data-render-ms of <html>
  timeline     x0, px_per_s, width, and its lanes: pid, why, name, and
               their slices (t_us, dur_us, kind, x, width) and instants
               (t_us, kind); markers (t_us, kind); gaps; wakes: the arrows
               from a waker's lane to the wait's (t_us, from and to pids,
               x1, x2, y1, y2)
  flames       per graph: kind, total, width, its root frame (name,
               v, rect width), and the names of all its frames drawn
  charts       per metrics chart: its group and series names

  loads        with --timings N: N loads, each in a new browser driven over
               the DevTools protocol: DOMContentLoaded, first paint, first
               contentful paint, end of drawing (ms from navigation start)

  page-check.py PAGE.html OUTDIR [--screenshot FILE.png] [--size W,H] [--timings N]

OUTDIR gets dom.html (the DOM after the scripts ran), console.log and
netlog.json.  Exit 0 when Chromium ran, whatever the page holds: the
caller judges it.
"""
import argparse
import html.parser
import json
import os
import re
import select
import subprocess
import sys
import time


def chromium_cmd(outdir, extra):
    # no sandbox: run as root; no GPU: none here; a profile of its own;
    # nothing of the browser's own that talks to the network
    return ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
            '--no-default-browser-check', '--disable-background-networking', '--disable-sync',
            '--disable-component-update', '--disable-default-apps', '--disable-extensions',
            '--disable-features=NetworkTimeServiceQuerying,Translate,OptimizationHints,MediaRouter',
            '--user-data-dir=' + os.path.join(outdir, 'profile'),
            '--enable-logging=stderr', '--v=0',
            '--log-net-log=' + os.path.join(outdir, 'netlog.json'), '--net-log-capture-mode=Default'] + extra


def run(outdir, page, extra, log_name):
    url = 'file://' + os.path.abspath(page)
    # unshare -n: a network namespace with only a loopback that is down
    cmd = ['unshare', '-n'] + chromium_cmd(outdir, extra) + [url]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    with open(os.path.join(outdir, log_name), 'wb') as f:
        f.write(p.stderr)
    return p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace'), p.returncode


def console_lines(stderr, url):
    """The console messages of the page at @url (the browser's own pages,
    chrome://, log there too)."""
    # [pid:tid:date:LEVEL:CONSOLE:line] "message", source: url (line)
    # (CONSOLE(line) in older versions; the level is INFO for every
    # console message, errors and uncaught exceptions too)
    out = []
    for line in stderr.splitlines():
        m = re.search(r':([A-Z]+\d*):CONSOLE[:(](\d+)\)?\] (.*)$', line)
        if m and re.search(r', source: ' + re.escape(url) + r' \(\d+\)$', m.group(3)):
            out.append({'level': m.group(1), 'line': int(m.group(2)), 'text': m.group(3)})
    return out


def requests(netlog_path):
    """The URLs the page asked for (its own file:// and data:/blob: URLs
    aside), and those the browser asked for on its own behalf (component
    updates, network time: initiator "not an origin"; a page's requests
    carry its origin, "null" for a file)."""
    try:
        with open(netlog_path) as f:
            text = f.read()
    except OSError:
        return ['(no network log written)'], []
    # a log cut short by the browser's exit: close it
    text = text.rstrip().rstrip(',')
    log = None
    for tail in ('', ']}', '}]}'):
        try:
            log = json.loads(text + tail)
            break
        except json.JSONDecodeError:
            pass
    if log is None:
        return ['(network log unreadable)'], []
    types = {v: k for k, v in log.get('constants', {}).get('logEventTypes', {}).items()}
    page, browser = [], []
    for ev in log.get('events', []):
        params = ev.get('params') or {}
        if types.get(ev.get('type')) != 'URL_REQUEST_START_JOB' or not isinstance(params.get('url'), str):
            continue
        u = params['url']
        if u.startswith(('file://', 'data:', 'blob:', 'about:', 'chrome:', 'chrome-error:')):
            continue
        dst = browser if params.get('initiator') == 'not an origin' else page
        if u not in dst:
            dst.append(u)
    return page, browser


class Cdp:
    """Chromium driven over --remote-debugging-pipe (the DevTools protocol:
    JSON messages ending in NUL on fds 3 and 4): what --dump-dom cannot
    give, the page's first paint, which Chromium only makes for a page it
    shows."""

    def __init__(self, outdir, size):
        r3, self.w = os.pipe()  # commands: Chromium reads its fd 3
        self.r, w4 = os.pipe()  # replies and events: it writes its fd 4

        def fds():
            os.dup2(r3, 3)
            os.dup2(w4, 4)
        self.p = subprocess.Popen(['unshare', '-n'] + chromium_cmd(outdir, [
            '--remote-debugging-pipe', '--window-size=' + size]) + ['about:blank'],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r3)
        os.close(w4)
        self.buf = b''
        self.id = 0

    def send(self, method, params=None, session=None):
        self.id += 1
        m = {'id': self.id, 'method': method, 'params': params or {}}
        if session:
            m['sessionId'] = session
        os.write(self.w, json.dumps(m).encode() + b'\0')
        return self.id

    def recv(self, timeout=60):
        end = time.monotonic() + timeout
        while b'\0' not in self.buf:
            r, _, _ = select.select([self.r], [], [], max(0.0, end - time.monotonic()))
            if not r:
                raise TimeoutError('no answer from Chromium')
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise EOFError('Chromium exited')
            self.buf += chunk
        m, self.buf = self.buf.split(b'\0', 1)
        return json.loads(m)

    def call(self, method, params=None, session=None):
        i = self.send(method, params, session)
        while True:
            m = self.recv()
            if m.get('id') == i:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})

    def close(self):
        try:
            self.call('Browser.close')
        except (OSError, EOFError, TimeoutError, RuntimeError):
            self.p.kill()
        self.p.wait()
        os.close(self.w)
        os.close(self.r)


def timings(page, outdir, size):
    """One load of @page in a new browser: its DOMContentLoaded, first
    paint and first contentful paint, and the end of its script's
    drawing, in ms from navigation start (the page's clock)."""
    c = Cdp(outdir, size)
    try:
        target = c.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        s = c.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        c.call('Page.enable', session=s)
        c.send('Page.navigate', {'url': 'file://' + os.path.abspath(page)}, s)
        while c.recv().get('method') != 'Page.loadEventFired':
            pass
        # paint entries come after the first frame is shown
        for _ in range(50):
            v = json.loads(c.call('Runtime.evaluate', {'returnByValue': True, 'expression': """JSON.stringify({
                dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
                paint: Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime])),
                render: document.documentElement.dataset.renderMs})"""}, s)['result']['value'])
            if 'first-paint' in v['paint']:
                break
            time.sleep(0.1)
        return {'dcl_ms': round(v['dcl'], 1), 'fp_ms': v['paint'].get('first-paint'),
                'fcp_ms': v['paint'].get('first-contentful-paint'),
                'render_ms': float(v['render']) if v.get('render') else None}
    finally:
        c.close()


class Dom(html.parser.HTMLParser):
    """The report's DOM contract, from the dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.html = {}
        self.timeline = None
        self.lane = None
        self.flames = []
        self.flame = None
        self.frame = None
        self.charts = []
        self.chart = None
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get('class') or '').split()
        if tag == 'html':
            self.html = a
        if tag == 'svg' and a.get('id') == 'timeline-svg':
            self.timeline = {'x0': float(a.get('data-x0', 'nan')), 'px_per_s': float(a.get('data-px-per-s', 'nan')),
                             'width': float(a.get('data-width', 'nan')), 'lanes': [], 'markers': [], 'gaps': [], 'wakes': []}
        elif tag == 'svg' and 'flame' in cls:
            self.flame = {'kind': a.get('data-kind'), 'total': float(a.get('data-total', 'nan')),
                          'width': float(a.get('data-width', 'nan')), 'root': None, 'names': []}
            self.flames.append(self.flame)
        elif tag == 'svg' and 'chart' in cls:
            self.chart = {'group': a.get('data-group'), 'series': []}
            self.charts.append(self.chart)
        if self.timeline is not None:
            if tag == 'g' and 'lane' in cls:
                self.lane = {'pid': int(a.get('data-pid', '0')), 'why': a.get('data-why'),
                             'name': a.get('data-name'), 'slices': [], 'instants': []}
                self.timeline['lanes'].append(self.lane)
            elif 'slice' in cls and self.lane is not None:
                self.lane['slices'].append({'t_us': float(a.get('data-t', 'nan')),
                                            'dur_us': float(a.get('data-dur', 'nan')),
                                            'kind': [c for c in cls if c != 'slice'],
                                            'x': float(a.get('x', 'nan')), 'width': float(a.get('width', 'nan'))})
            elif 'instant' in cls and self.lane is not None:
                self.lane['instants'].append({'t_us': float(a.get('data-t', 'nan')),
                                              'kind': [c for c in cls if c != 'instant']})
            elif 'marker' in cls:
                self.timeline['markers'].append({'t_us': float(a.get('data-t', 'nan')),
                                                 'kind': [c for c in cls if c != 'marker']})
            elif tag == 'line' and 'wake' in cls:
                self.timeline['wakes'].append({'t_us': float(a.get('data-t', 'nan')),
                                               'from': int(a.get('data-from', '0')), 'to': int(a.get('data-to', '0')),
                                               **{k: float(a.get(k, 'nan')) for k in ('x1', 'x2', 'y1', 'y2')}})
            elif tag == 'rect' and 'gap' in cls:
                self.timeline['gaps'].append({'t_us': float(a.get('data-t', 'nan')),
                                              'lost': a.get('data-lost')})
        if self.flame is not None and tag == 'g' and 'frame' in cls and a.get('data-name') is not None:
            self.flame['names'].append(a.get('data-name'))
        if self.flame is not None and tag == 'g' and 'frame' in cls and a.get('data-depth') == '0':
            self.frame = {'name': a.get('data-name'), 'v': float(a.get('data-v', 'nan')), 'width': None}
            self.flame['root'] = self.frame
        elif self.frame is not None and tag == 'rect' and self.frame['width'] is None:
            self.frame['width'] = float(a.get('width', 'nan'))
        if self.chart is not None and tag == 'path' and 'series' in cls:
            self.chart['series'].append(a.get('data-name'))
        if tag in ('svg', 'g'):
            self.stack.append((tag, cls, a))

    def handle_endtag(self, tag):
        if tag not in ('svg', 'g') or not self.stack:
            return
        t, cls, a = self.stack.pop()
        if t == 'svg':
            if a.get('id') == 'timeline-svg':
                self.lane = None
                self.result_timeline = self.timeline
                self.timeline = None
            self.flame = None
            self.chart = None
        elif t == 'g':
            if 'lane' in cls:
                self.lane = None
            if 'frame' in cls and a.get('data-depth') == '0':
                self.frame = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('page')
    ap.add_argument('outdir')
    ap.add_argument('--screenshot')
    ap.add_argument('--size', default='1400,2600')
    ap.add_argument('--timings', type=int, default=0, metavar='N',
                    help='also N loads, each in a new browser, timed (DevTools protocol)')
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)

    dom, stderr, rc = run(args.outdir, args.page, ['--dump-dom', '--virtual-time-budget=5000'], 'console.log')
    with open(os.path.join(args.outdir, 'dom.html'), 'w') as f:
        f.write(dom)
    d = Dom()
    d.feed(dom)
    timeline = getattr(d, 'result_timeline', d.timeline)
    page_requests, browser_requests = requests(os.path.join(args.outdir, 'netlog.json'))
    out = {
        'chromium_exit': rc,
        'console': console_lines(stderr, 'file://' + os.path.abspath(args.page)),
        'requests': page_requests,
        'browser_requests': len(browser_requests),
        'ready': d.html.get('data-ready') == '1',
        'timings': {k: float(d.html[k]) for k in ('data-dcl-ms', 'data-fp-ms', 'data-render-ms')
                    if k in d.html and re.match(r'^[0-9.]+$', d.html[k])},
        'timeline': timeline,
        'flames': d.flames,
        'charts': d.charts,
    }
    if args.screenshot:
        _, stderr2, rc2 = run(args.outdir, args.page,
                              ['--screenshot=' + os.path.abspath(args.screenshot),
                               '--window-size=' + args.size, '--hide-scrollbars'], 'console-screenshot.log')
        out['screenshot_exit'] = rc2
        out['screenshot'] = os.path.exists(args.screenshot) and os.path.getsize(args.screenshot) > 0
    if args.timings:
        out['loads'] = [timings(args.page, os.path.join(args.outdir, 'load%d' % i), args.size)
                        for i in range(args.timings)]
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')


main()
