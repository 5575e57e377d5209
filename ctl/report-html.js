/* flightrec: the interactive part of `frctl report --format html`.
 *
 * The C side writes one self-contained page: a server-rendered summary and
 * tables, four empty `.view` divs, the report data as JSON in #fr-data, and
 * this script inline. It draws the timeline, the two flame graphs and the
 * metric charts with DOM calls only (createElementNS/textContent, never
 * innerHTML: process and frame names are untrusted). Times in the data are
 * integer microseconds from the window start.
 *
 * The timeline and the charts share one x geometry (label column LABEL_W,
 * plot width geo.w) and one visible time range (view.t0..view.t1): zooming
 * or panning the timeline relayouts all of them.
 */
(() => {
  'use strict';

  const SVGNS = 'http://www.w3.org/2000/svg';
  const LABEL_W = 230;   // label column of the timeline and the charts (px)
  const PAD_R = 12;      // right margin of the time plots
  const ROW_H = 30;      // timeline lane
  const AXIS_H = 24;     // time axis above the lanes
  const FLAG_H = 16;     // marker labels above the axis (only if there are markers)
  const FRAME_H = 18;    // flame graph row
  const CHART_H = 72;    // plot height of one metric chart
  const MIN_SPAN = 20;   // deepest zoom: 20 us across the whole plot
  const UI_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  const MONO_FONT = 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';

  const SLICE_KINDS = { offcpu: 'off-CPU', runq: 'run queue', syscall: 'syscall', block: 'block I/O' };
  const INSTANT_KINDS = { exec: 'exec', fork: 'fork', exit: 'exit', tcp: 'TCP', signal: 'fatal signal', oom: 'OOM kill', crash: 'crash' };
  const MARKER_KINDS = { trigger: 'trigger', mark: 'mark' };
  const LOUD = new Set(['crash', 'oom', 'signal']);   // instants drawn bigger
  const WHY = {
    trigger: 'its record fired the rule',
    busiest: 'one of the busiest processes of the window',
    slowest: 'had the longest waits of the window',
    waker: 'woke one of the longest waits (it held it up)',
    involved: 'involved in the incident',
  };
  const SERIES_COLORS = ['#3b6fd8', '#e8590c', '#2e9e5b', '#9c4fd6', '#d1242f', '#0f9fb0',
    '#b7860b', '#6e7781', '#e64980', '#1d3f8f'];

  const docEl = document.documentElement;

  /* ---------- data, normalised so that missing parts are just empty ---------- */

  let data = null;
  try {
    data = JSON.parse(document.getElementById('fr-data').textContent);
  } catch (e) {
    data = null;
  }
  const arr = (a) => (Array.isArray(a) ? a : []);
  const bad = !data || typeof data !== 'object';
  if (bad) data = {};
  const win = data.window || {};
  const DUR = Math.max(1, Number(win.duration_us) || 0);
  const records = arr(data.records);
  const lanes = arr(data.lanes).filter((l) => l && typeof l === 'object');
  const markers = arr(data.markers).filter(Array.isArray);
  const gaps = arr(data.gaps).filter(Array.isArray);
  const wakes = arr(data.wakes).filter(Array.isArray);
  const flame = data.flame || {};
  const metrics = data.metrics || {};
  const mT = arr(metrics.t).map(Number);
  const groups = arr(metrics.groups).filter((g) => g && arr(g.series).length);

  /* ---------- small helpers ---------- */

  function svg(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function elt(tag, cls, text, parent) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  const note = (host, text) => elt('p', 'note', text, host);
  const r2 = (v) => Math.round(v * 100) / 100;
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const num = (v, d = 0) => (Number.isFinite(Number(v)) ? Number(v) : d);
  const cls = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, '') || 'other';
  const recText = (i) => (Number.isInteger(i) && i >= 0 && i < records.length ? String(records[i]) : null);
  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
  const pct = (a, b) => (b > 0 ? `${(100 * a / b).toFixed(a / b < 0.001 ? 3 : 1)}%` : '–');

  function fmtDur(us) {
    const a = Math.abs(us);
    if (a < 1000) return `${Math.round(us)} µs`;
    if (a < 1e6) return `${(us / 1000).toFixed(a < 1e4 ? 2 : 1)} ms`;
    if (a < 1e8) return `${(us / 1e6).toFixed(a < 1e7 ? 3 : 1)} s`;
    const s = Math.round(us / 1e6);
    return s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${(s / 3600).toFixed(1)} h`;
  }
  function fmtNum(v) {
    const a = Math.abs(v);
    return v.toLocaleString('en-US', { maximumFractionDigits: a >= 100 ? 0 : a >= 10 ? 1 : 2 });
  }
  function niceCeil(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * p).find((s) => s >= v * (1 - 1e-9));
  }

  // Wall-clock time of a point of the window, from window.start (ISO 8601).
  const startSod = (() => {
    const m = /T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?/.exec(String(win.start || ''));
    if (!m) return null;
    return ((+m[1] * 60 + +m[2]) * 60 + +m[3]) * 1e6 + Number((m[4] || '').slice(0, 6).padEnd(6, '0'));
  })();
  function fmtAt(t) {
    let s = `+${(t / 1e6).toFixed(3)} s`;
    if (startSod != null) {
      const ms = Math.floor((((startSod + t) % 864e8) + 864e8) % 864e8 / 1000);
      const p = (n, w = 2) => String(n).padStart(w, '0');
      s += `  (${p(Math.floor(ms / 3.6e6))}:${p(Math.floor(ms / 6e4) % 60)}:${p(Math.floor(ms / 1000) % 60)}.${p(ms % 1000, 3)}`;
      s += /Z$/i.test(String(win.start)) ? ' UTC)' : ')';
    }
    return s;
  }

  // Text measurement (canvas, no layout) to clip labels to a width.
  const measure = document.createElement('canvas').getContext('2d');
  let measureFont = '';
  function textWidth(s, font) {
    if (!measure) return s.length * 7;
    if (font !== measureFont) measure.font = measureFont = font;
    return measure.measureText(s).width;
  }
  function fitText(s, maxW, font) {
    if (textWidth(s, font) <= maxW) return s;
    let lo = 0, hi = s.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (textWidth(s.slice(0, mid) + '…', font) <= maxW) lo = mid; else hi = mid - 1;
    }
    return lo ? s.slice(0, lo) + '…' : '';
  }
  function lowerBound(a, x) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] < x) lo = m + 1; else hi = m; }
    return lo;
  }
  function legendItem(parent, swCls, label, color) {
    const it = elt('span', 'item', null, parent);
    const sw = elt('span', 'sw ' + swCls, null, it);
    if (color) sw.style.setProperty('--c', color);
    it.append(label);
    return it;
  }

  /* ---------- tooltip ---------- */

  const tip = elt('div', null, null, document.body);
  tip.id = 'tooltip';
  tip.setAttribute('role', 'tooltip');
  tip.hidden = true;
  let tipKey = null;

  // lines: [{text, cls, color}], the first one is the title. build() is only
  // called when the hovered thing changes; moving within it just repositions.
  function showTip(ev, key, build) {
    if (key !== tipKey) {
      tipKey = key;
      tip.replaceChildren();
      build().forEach((ln, i) => {
        if (!ln) return;
        const d = elt('div', ln.cls || (i ? 'tt-line' : 'tt-title'), null, tip);
        if (ln.color) elt('span', 'tt-sw', null, d).style.background = ln.color;
        d.append(ln.text);
      });
      tip.hidden = false;
    }
    const r = tip.getBoundingClientRect(), pad = 14;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + r.width > innerWidth - 4) x = Math.max(4, ev.clientX - pad - r.width);
    if (y + r.height > innerHeight - 4) y = Math.max(4, ev.clientY - pad - r.height);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }
  function hideTip() {
    tipKey = null;
    tip.hidden = true;
  }

  /* ---------- the shared time view ---------- */

  const view = { t0: 0, t1: DUR };
  let geo = { x0: LABEL_W, w: 600 };
  const pxPerS = () => geo.w / (DUR / 1e6);   // unzoomed scale
  const X = (t) => geo.x0 + (t - view.t0) * geo.w / (view.t1 - view.t0);
  const T = (x) => view.t0 + (x - geo.x0) * (view.t1 - view.t0) / geo.w;
  const zoomed = () => view.t0 > 0 || view.t1 < DUR;
  const layouts = [];   // relayout functions of the time views, rebuilt by drawAll
  const cursors = [];   // hover cursor lines, one per time view
  const ranges = [];    // [label, button] of each "visible range" control
  let queued = false;

  function setView(t0, t1) {
    const span = clamp(t1 - t0, Math.min(MIN_SPAN, DUR), DUR);
    view.t0 = clamp(t0, 0, DUR - span);
    view.t1 = view.t0 + span;
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; layoutAll(); });
  }
  function layoutAll() {
    for (const f of layouts) f();
  }
  function updateRanges() {
    const text = zoomed()
      ? `${(view.t0 / 1e6).toFixed(3)} – ${(view.t1 / 1e6).toFixed(3)} s of ${fmtDur(DUR)}`
      : `whole window, ${fmtDur(DUR)}`;
    for (const [label, button] of ranges) {
      label.textContent = text;
      button.disabled = !zoomed();
    }
  }
  function rangeControls(parent) {
    const label = elt('span', 'range', null, parent);
    const button = elt('button', null, 'Reset zoom', parent);
    button.type = 'button';
    button.addEventListener('click', () => setView(0, DUR));
    ranges.push([label, button]);
  }
  function setCursor(t) {
    for (const c of cursors) {
      if (t == null || t < view.t0 || t > view.t1) { c.setAttribute('display', 'none'); continue; }
      const x = r2(X(t));
      c.setAttribute('x1', x);
      c.setAttribute('x2', x);
      c.removeAttribute('display');
    }
  }

  // Nice time ticks for the visible range, labelled in seconds from the start.
  function timeTicks() {
    const span = view.t1 - view.t0;
    const raw = span / Math.max(1, geo.w / 90);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    const dec = Math.max(0, Math.ceil(-Math.log10(step / 1e6) - 1e-9));
    const out = [];
    for (let i = Math.ceil(view.t0 / step); i * step <= view.t1; i++) {
      out.push([i * step, `${(i * step / 1e6).toFixed(dec)} s`]);
    }
    return out;
  }
  // Vertical grid lines (and labels at labelY, if given) into group g.
  function drawGrid(g, y1, y2, labelY) {
    g.replaceChildren();
    for (const [t, label] of timeTicks()) {
      const x = r2(X(t));
      svg('line', { x1: x, x2: x, y1, y2 }, g);
      if (labelY != null) svg('text', { x, y: labelY, 'text-anchor': 'middle' }, g).textContent = label;
    }
  }

  // Wheel zoom (around the cursor), drag to pan, double-click to reset, and
  // hover, on one of the time views.
  function attachTimeControls(el, onHover, wheel) {
    let drag = null;
    const local = (ev) => { const r = el.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top]; };
    const inPlot = (x) => x >= geo.x0 && x <= geo.x0 + geo.w;
    if (wheel) {
      el.addEventListener('wheel', (ev) => {
        const [x] = local(ev);
        const k = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
        const dx = ev.deltaX * k, dy = ev.deltaY * k, span = view.t1 - view.t0;
        // Let the page scroll when zooming out has nothing left to do.
        if (!inPlot(x) || (Math.abs(dy) >= Math.abs(dx) && dy > 0 && !zoomed())) return;
        ev.preventDefault();
        if (Math.abs(dx) > Math.abs(dy)) {
          setView(view.t0 + dx / geo.w * span, view.t1 + dx / geo.w * span);
          return;
        }
        const ns = clamp(span * Math.exp(clamp(dy, -300, 300) * 0.002), MIN_SPAN, DUR);
        const t0 = T(x) - (x - geo.x0) / geo.w * ns;
        setView(t0, t0 + ns);
      }, { passive: false });
    }
    el.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0 || !inPlot(local(ev)[0])) return;
      drag = { x: ev.clientX, t0: view.t0, t1: view.t1 };
      el.setPointerCapture(ev.pointerId);
      el.classList.add('dragging');
      hideTip();
    });
    el.addEventListener('pointermove', (ev) => {
      if (drag) {
        const dt = (ev.clientX - drag.x) / geo.w * (drag.t1 - drag.t0);
        setView(drag.t0 - dt, drag.t1 - dt);
        return;
      }
      const [x, y] = local(ev);
      onHover(ev, x, y, inPlot(x));
    });
    const end = () => { drag = null; el.classList.remove('dragging'); };
    el.addEventListener('pointerup', end);
    el.addEventListener('pointercancel', end);
    el.addEventListener('pointerleave', () => { hideTip(); setCursor(null); });
    el.addEventListener('dblclick', (ev) => { if (inPlot(local(ev)[0])) setView(0, DUR); });
  }

  /* ---------- timeline ---------- */

  // What a hovered element shows: instants, markers and gaps are in tlInfo;
  // slices (thousands) are read back from their attributes and their lane.
  const tlInfo = new WeakMap();
  const laneOf = new WeakMap();   // g.lane -> lane
  function sliceInfo(n) {
    if (n.tagName !== 'rect' || !n.classList.contains('slice')) return null;
    const a = (k, d) => num(n.getAttribute(k), d);
    return { type: 'slice', lane: laneOf.get(n.parentNode), kind: n.classList[1], t: a('data-t'), dur: a('data-dur'),
      rec: a('data-rec', -1), count: a('data-count', 1) };
  }

  function timelineTip(info) {
    const lane = info.lane ? `${info.lane.name}[${info.lane.pid}]` : null;
    const rec = recText(info.rec);
    const recLine = rec != null ? { text: rec, cls: 'tt-rec' } : null;
    switch (info.type) {
      case 'slice':
        return [{ text: `${SLICE_KINDS[info.kind] || info.kind} · ${fmtDur(info.dur)}`, color: `var(--k-${info.kind}, #8c959f)` },
          { text: lane, cls: 'tt-muted' }, { text: `at ${fmtAt(info.t)}` },
          info.count > 1 ? { text: `${fmtInt(info.count)} records merged, ${fmtDur(info.dur)} total` } : recLine];
      case 'instant':
        return [{ text: INSTANT_KINDS[info.kind] || info.kind }, { text: lane, cls: 'tt-muted' },
          { text: `at ${fmtAt(info.t)}` }, recLine];
      case 'marker':
        return [{ text: info.kind === 'trigger' ? 'Trigger: a rule fired' : `Marker: ${info.kind}` },
          { text: `at ${fmtAt(info.t)}` }, recLine];
      case 'wake':
        return [{ text: `${info.from.name}[${info.from.pid}] woke ${lane}` }, { text: `at ${fmtAt(info.t)}` },
          { text: 'It ended this wait:', cls: 'tt-muted' }, recLine];
      case 'gap':
        return [{ text: `${fmtInt(info.lost)} records lost` },
          { text: `${fmtAt(info.t)}, for ${fmtDur(info.dur)}` },
          { text: 'The recording is incomplete here.', cls: 'tt-muted' }];
      default: {
        const l = info.lane;
        return [{ text: `${l.name} ${l.pid}` }, { text: l.exe ? String(l.exe) : 'no executable path', cls: 'tt-rec' },
          { text: `${l.why}: ${WHY[l.why] || 'shown'}`, cls: 'tt-muted' },
          { text: `${l.slices.length} slices, ${l.instants.length} events` }];
      }
    }
  }

  function buildTimeline(host, W) {
    const laneData = lanes.map((l) => ({
      pid: l.pid ?? '', name: String(l.name ?? '?'), exe: l.exe, why: cls(l.why || 'involved'),
      slices: arr(l.slices).filter(Array.isArray), instants: arr(l.instants).filter(Array.isArray),
    }));

    // Legend and controls.
    const bar = elt('div', 'bar', null, host);
    const legend = elt('div', 'legend', null, bar);
    for (const k in SLICE_KINDS) legendItem(legend, k, SLICE_KINDS[k]);
    const seen = new Set(laneData.flatMap((l) => l.instants.map((i) => cls(i[1]))));
    for (const k in INSTANT_KINDS) if (seen.has(k)) legendItem(legend, `tri ${k}`, INSTANT_KINDS[k]);
    const mseen = new Set(markers.map((m) => cls(m[1])));
    for (const k in MARKER_KINDS) if (mseen.has(k)) legendItem(legend, `vline ${k}`, MARKER_KINDS[k]);
    if (gaps.length) legendItem(legend, 'gap', 'records lost');
    if (wakes.length) legendItem(legend, 'vline wake', 'woke (waker → wait)');
    const ctl = elt('div', 'ctl', null, bar);
    rangeControls(ctl);
    elt('span', 'hint', 'wheel: zoom · drag: pan · double-click: reset', ctl);

    const flagH = markers.length ? FLAG_H : 0;
    const top = flagH + AXIS_H;
    const rows = Math.max(1, laneData.length);
    const H = top + rows * ROW_H + 1;
    const x0 = geo.x0, xEnd = geo.x0 + geo.w;
    const s = svg('svg', {
      id: 'timeline-svg', class: 'time', width: W, height: H, 'data-x0': x0, 'data-px-per-s': pxPerS(),
      'data-width': geo.w, 'font-family': UI_FONT, 'font-size': 11, role: 'img',
      'aria-label': `Timeline of ${laneData.length} processes`,
    }, host);
    const defs = svg('defs', {}, s);
    // (6 px wider than the plot: instants and flags at the very ends stay whole)
    svg('rect', { x: x0 - 6, y: 0, width: geo.w + 12, height: H }, svg('clipPath', { id: 'fr-clip-tl' }, defs));
    const hatch = svg('pattern', { id: 'fr-hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    svg('rect', { width: 6, height: 6, class: 'hatch-bg' }, hatch);
    svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-fg' }, hatch);
    const head = svg('marker', { id: 'fr-arrow', viewBox: '0 0 6 6', refX: 6, refY: 3, markerWidth: 7, markerHeight: 7, orient: 'auto' }, defs);
    svg('path', { d: 'M0 0L6 3L0 6z', class: 'wake-head' }, head);

    // Lane stripes and labels (outside the clip).
    const bg = svg('g', { class: 'rows' }, s);
    const labels = svg('g', { class: 'labels' }, s);
    const nameFont = `600 12px ${UI_FONT}`, tailFont = `11px ${UI_FONT}`;
    laneData.forEach((l, i) => {
      const y = top + i * ROW_H;
      svg('rect', { class: i % 2 ? 'row odd' : 'row', x: 0, y, width: W, height: ROW_H }, bg);
      const tailW = textWidth(`  ${l.pid}  (${l.why})`, tailFont);
      const t = svg('text', { x: 8, y: y + 19 }, labels);
      svg('tspan', { class: 'lname' }, t).textContent = fitText(l.name, LABEL_W - 18 - tailW, nameFont);
      svg('tspan', { class: 'lpid', dx: 5 }, t).textContent = String(l.pid);
      svg('tspan', { class: `lwhy ${l.why}`, dx: 5 }, t).textContent = `(${l.why})`;
    });
    svg('line', { class: 'sep', x1: x0 - 0.5, x2: x0 - 0.5, y1: top, y2: H }, s);
    const grid = svg('g', { class: 'grid' }, s);
    const axis = svg('g', { class: 'axis' }, s);
    svg('line', { class: 'axis-base', x1: 0, x2: W, y1: top - 0.5, y2: top - 0.5 }, s);

    // Everything on the time axis is clipped to the plot.
    const plot = svg('g', { 'clip-path': 'url(#fr-clip-tl)' }, s);
    const slices = [], instants = [], gapEls = [], markEls = [];
    const kinds = new Map();   // kind -> class name, computed once per kind
    const kindClass = (kind) => { if (!kinds.has(kind)) kinds.set(kind, cls(kind)); return kinds.get(kind); };
    if (!laneData.length) {
      svg('text', { class: 'empty', x: x0 + geo.w / 2, y: top + 19, 'text-anchor': 'middle' }, plot)
        .textContent = 'No process had records in this window.';
    }
    laneData.forEach((l, i) => {
      const y = top + i * ROW_H;
      const g = svg('g', { class: 'lane', 'data-pid': l.pid, 'data-why': l.why, 'data-name': l.name }, plot);
      laneOf.set(g, l);
      // Two bands: scheduling (off-CPU, run queue) above, I/O (syscall, block)
      // below; longest first, so that short slices stay visible on top.
      const order = l.slices.slice().sort((p, q) => num(q[1]) - num(p[1]));
      for (const [t0, d0, kind, rec, count] of order) {
        const k = kindClass(kind), t = num(t0), dur = Math.max(0, num(d0)), n = Math.max(1, num(count, 1));
        const io = k === 'syscall' || k === 'block';
        const r = svg('rect', {
          class: `slice ${k}${n > 1 ? ' merged' : ''}`, 'data-t': t, 'data-dur': dur, 'data-rec': num(rec, -1),
          y: y + (io ? 16 : 4), height: 11,
        }, g);
        if (n > 1) r.setAttribute('data-count', n);
        slices.push([r, t, dur, false]);
      }
      for (const [t0, kind, rec] of l.instants) {
        const k = cls(kind), t = num(t0), loud = LOUD.has(k);
        const e = svg('g', { class: `instant ${k}${loud ? ' loud' : ''}`, 'data-t': t, 'data-rec': num(rec, -1) }, g);
        svg('path', { d: loud ? `M0 3V${ROW_H - 2}M-5 1h10l-5 8z` : `M0 4V${ROW_H - 4}M-3.5 2h7l-3.5 5z` }, e);
        svg('rect', { class: 'hit', x: -4, y: 0, width: 8, height: ROW_H }, e);
        instants.push([e, t, y]);
        tlInfo.set(e, { type: 'instant', lane: l, kind: k, t, rec: num(rec, -1) });
      }
    });
    const gapG = svg('g', { class: 'gaps' }, plot);
    for (const [t0, d0, lost] of gaps) {
      const t = num(t0), dur = Math.max(0, num(d0));
      const r = svg('rect', { class: 'gap', 'data-t': t, 'data-dur': dur, 'data-lost': num(lost), y: top, height: rows * ROW_H, fill: 'url(#fr-hatch)' }, gapG);
      gapEls.push([r, t, dur, false]);
      tlInfo.set(r, { type: 'gap', t, dur, lost: num(lost) });
    }
    for (const [t0, kind, rec] of markers) {
      const k = cls(kind), t = num(t0);
      const info = { type: 'marker', kind: k, t, rec: num(rec, -1) };
      const line = svg('line', { class: `marker ${k}`, 'data-t': t, 'data-rec': num(rec, -1), y1: 2, y2: H }, plot);
      const hit = svg('line', { class: 'hit', y1: 2, y2: H }, plot);
      const flag = svg('text', { class: `flag ${k}`, y: 12 }, plot);
      flag.textContent = MARKER_KINDS[k] || k;
      for (const e of [line, hit, flag]) tlInfo.set(e, info);
      markEls.push([t, line, hit, flag, textWidth(flag.textContent, nameFont)]);   // (a bit wider: fine)
    }
    // Wakeups: an arrow from the waker's lane to the lane of the wait it ended.
    const wakeEls = [];
    for (const [t0, from, to, rec] of wakes) {
      const a = num(from, -1), b = num(to, -1);
      if (a < 0 || b < 0 || a >= laneData.length || b >= laneData.length || a === b) continue;
      const t = num(t0), down = b > a;
      const y1 = top + a * ROW_H + (down ? ROW_H - 4 : 4), y2 = top + b * ROW_H + (down ? 4 : ROW_H - 4);
      const line = svg('line', {
        class: 'wake', 'data-t': t, 'data-from': laneData[a].pid, 'data-to': laneData[b].pid, y1, y2, 'marker-end': 'url(#fr-arrow)',
      }, plot);
      const hit = svg('line', { class: 'hit', y1, y2 }, plot);
      const info = { type: 'wake', t, from: laneData[a], lane: laneData[b], rec: num(rec, -1) };
      tlInfo.set(line, info);
      tlInfo.set(hit, info);
      wakeEls.push([t, line, hit]);
    }
    const cursor = svg('line', { class: 'cursor', y1: flagH, y2: H, display: 'none' }, s);
    cursors.push(cursor);

    if (num(data.lanes_omitted) > 0) {
      note(host, `${fmtInt(data.lanes_omitted)} more processes had records in this window but no lane here.`);
    }
    if (num(data.slices_merged) > 0) {
      note(host, `${fmtInt(data.slices_merged)} short records were merged into aggregated slices (drawn lighter; hover one for its count).`);
    }

    // Place e = [rect, t, dur, hidden] on the plot: clipped to it, at least
    // 1 px wide; out of view, width 0 (written once, not on every frame).
    function place(e) {
      const [r, t, dur] = e, a = X(t), b = X(t + dur);
      if (b < x0 - 1 || a > xEnd + 1) {
        if (!e[3]) { r.setAttribute('width', 0); e[3] = true; }
        return;
      }
      e[3] = false;
      const a2 = Math.max(a, x0);
      r.setAttribute('x', r2(a2));
      r.setAttribute('width', r2(Math.max(1, Math.min(b, xEnd) - a2)));
    }
    layouts.push(() => {
      for (const e of slices) place(e);
      for (const e of gapEls) place(e);
      for (const [e, t, y] of instants) {
        const x = X(t);
        if (x < x0 - 8 || x > xEnd + 8) { e.setAttribute('display', 'none'); continue; }
        e.removeAttribute('display');
        e.setAttribute('transform', `translate(${r2(x)},${y})`);
      }
      for (const [t, line, hit] of wakeEls) {
        const x = r2(X(t));
        for (const e of [line, hit]) { e.setAttribute('x1', x); e.setAttribute('x2', x); }
      }
      for (const [t, line, hit, flag, fw] of markEls) {
        const x = r2(X(t)), left = x + 4 + fw > xEnd;   // near the right edge: label on the left
        for (const e of [line, hit]) { e.setAttribute('x1', x); e.setAttribute('x2', x); }
        flag.setAttribute('x', r2(left ? x - 4 : x + 4));
        flag.setAttribute('text-anchor', left ? 'end' : 'start');
      }
      drawGrid(grid, top, H, null);
      drawGrid(axis, top - 5, top, flagH + 14);
      for (const e of axis.querySelectorAll('text')) {   // keep the end labels inside
        const x = num(e.getAttribute('x'));
        if (x < x0 + 10) e.setAttribute('text-anchor', 'start');
        else if (x > xEnd - 10) e.setAttribute('text-anchor', 'end');
      }
    });

    attachTimeControls(s, (ev, x, y, inPlot) => {
      setCursor(inPlot && y >= flagH ? T(x) : null);
      let n = ev.target, info;
      while (n && n !== s && !(info = tlInfo.get(n) || sliceInfo(n))) n = n.parentNode;
      if (info) { showTip(ev, n, () => timelineTip(info)); return; }
      const i = Math.floor((y - top) / ROW_H);
      if (x < x0 && y >= top && i < laneData.length) {
        const lane = laneData[i];
        showTip(ev, lane, () => timelineTip({ type: 'lane', lane }));
        return;
      }
      hideTip();
    }, true);
  }

  /* ---------- flame graphs ---------- */

  const flameState = {};   // per kind: {root, base, focus, query}, kept across redraws

  // A normalised copy of the tree: parent links, children heaviest first,
  // h = height of the subtree (0 for a leaf).
  function normTree(n, p) {
    const o = { n: String(n.n ?? '?'), v: Math.max(0, num(n.v)), b: Math.max(0, num(n.b)), p, c: [], h: 0 };
    for (const c of arr(n.c)) if (c && typeof c === 'object') o.c.push(normTree(c, o));
    o.c.sort((a, b) => b.v - a.v);
    for (const c of o.c) o.h = Math.max(o.h, c.h + 1);
    return o;
  }
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }
  // Against the baseline: how much a frame grew (> 0, up to 1) or shrank
  // (< 0), as a share of the larger of its two weights.
  function frameDelta(node) {
    return (node.v - node.b) / Math.max(node.v, node.b, 1);
  }
  function frameColor(kind, node) {
    if (kind === 'cpu_diff') {
      // red: more than before, blue: less; the stronger the change, the
      // deeper the colour (Brendan Gregg's differential flame graphs)
      const d = frameDelta(node), l = Math.round(94 - 40 * Math.abs(d));
      return Math.abs(d) < 0.1 ? 'hsl(40,8%,90%)' : d > 0 ? `hsl(2,78%,${l}%)` : `hsl(214,72%,${l}%)`;
    }
    if ((!node.p && node.n === 'all') || node.n === '[other]') return kind === 'cpu' ? '#d9cfc4' : '#c8d3dc';
    const h = hash(node.n), a = (h & 255) / 255, b = ((h >>> 8) & 255) / 255, c = ((h >>> 16) & 255) / 255;
    return kind === 'cpu'
      ? `hsl(${Math.round(4 + 44 * a)},${Math.round(72 + 18 * b)}%,${Math.round(58 + 10 * c)}%)`
      : `hsl(${Math.round(188 + 52 * a)},${Math.round(42 + 24 * b)}%,${Math.round(62 + 10 * c)}%)`;
  }

  function buildFlame(host, W, kind) {
    const raw = flame[kind];
    if (!raw || typeof raw !== 'object' || !(num(raw.v) > 0)) {
      note(host, kind === 'offcpu' ? 'No off-CPU stacks in this window.' : 'No CPU samples in this window.');
      return;
    }
    const diff = kind === 'cpu_diff';
    const unit = String(flame[`${kind}_unit`] || (kind === 'offcpu' ? 'us' : 'samples'));
    const fmtW = (v) => (unit === 'us' ? fmtDur(v) : `${fmtInt(v)} ${unit}`);
    if (!flameState[kind]) {
      const root = normTree(raw, null);
      flameState[kind] = { root, base: root, focus: root, query: '' };
    }
    const st = flameState[kind];
    const monoFont = `11px ${MONO_FONT}`;
    const cw = textWidth('0123456789', monoFont) / 10;

    const bar = elt('div', 'bar', null, host);
    const left = elt('div', 'ctl', null, bar);
    const sel = elt('select', null, null, left);
    sel.setAttribute('aria-label', 'Process');
    elt('option', null, 'all processes', sel).value = '-1';
    st.root.c.forEach((c, i) => {
      const o = elt('option', null, `${c.n} (${pct(c.v, st.root.v)})`, sel);
      o.value = String(i);
      if (c === st.base) o.selected = true;
    });
    const search = elt('input', null, null, left);
    search.type = 'search';
    search.placeholder = 'Search frames';
    search.setAttribute('aria-label', 'Search frames');
    search.value = st.query;
    const reset = elt('button', null, 'Reset zoom', left);
    reset.type = 'button';
    const status = elt('span', 'status', null, bar);
    // deep stacks scroll inside their box instead of stretching the page
    const box = elt('div', 'flame-box', null, host);
    const s = svg('svg', {
      class: 'flame', 'data-kind': kind, 'data-total': st.root.v, 'data-width': W, width: W,
      'font-family': MONO_FONT, 'font-size': 11, role: 'img',
      'aria-label': diff ? 'Differential CPU flame graph' : `${kind === 'cpu' ? 'CPU' : 'Off-CPU'} flame graph`,
    }, box);
    if (diff) {
      note(host, 'The window\'s CPU stacks; red: more CPU than in the baseline (its samples scaled to the window\'s length), '
        + 'blue: less, grey: about the same.');
    }
    if (num(flame.aggregated) > 0) {
      note(host, `${fmtInt(flame.aggregated)} small frames were folded into "[other]" by frctl to bound the report's size.`);
    }
    const nodeOf = new WeakMap();

    function draw() {
      const { base, focus } = st;
      const q = st.query.trim().toLowerCase();
      const isMatch = (n) => q !== '' && n.n.toLowerCase().includes(q);
      const frag = document.createDocumentFragment();
      let deepest = 0;   // the height is that of the frames drawn, not the tree's
      const frame = (n, d, x, w, anc) => {
        deepest = Math.max(deepest, d);
        const g = svg('g', {
          class: `frame${anc ? ' anc' : ''}${isMatch(n) ? ' match' : ''}`, 'data-name': n.n, 'data-v': n.v, 'data-depth': d,
        }, frag);
        if (diff) { g.setAttribute('data-b', n.b); g.setAttribute('data-delta', frameDelta(n).toFixed(2)); }
        svg('rect', { x: r2(x), y: d * FRAME_H, width: r2(w), height: FRAME_H - 1, fill: frameColor(kind, n) }, g);
        const chars = Math.floor((w - 6) / cw);
        if (chars >= 3) {
          svg('text', { x: r2(x + 3), y: d * FRAME_H + 12.5 }, g)
            .textContent = n.n.length <= chars ? n.n : `${n.n.slice(0, chars - 1)}…`;
        }
        nodeOf.set(g, n);
      };
      // base .. focus: the ancestors of the zoomed frame, full width.
      const path = [];
      for (let n = focus; n; n = n.p) { path.unshift(n); if (n === base) break; }
      path.slice(0, -1).forEach((n, d) => frame(n, d, 0, W, true));
      const walk = (n, d, x, w) => {
        frame(n, d, x, w, false);
        if (!(n.v > 0)) return;
        let cx = x;
        for (const c of n.c) {
          const cwid = w * c.v / n.v;
          if (cwid >= 0.3) walk(c, d + 1, cx, cwid);   // narrower frames would not show
          cx += cwid;
        }
      };
      walk(focus, path.length - 1, 0, W);
      s.setAttribute('height', (deepest + 1) * FRAME_H);
      s.replaceChildren(frag);

      // Matched share: weight of the outermost matching frames, over the base.
      const matched = (n) => (isMatch(n) ? n.v : n.c.reduce((a, c) => a + matched(c), 0));
      let text = `${fmtW(base.v)}${base === st.root ? ' in all' : ` in ${base.n}`}`;
      if (q) { const m = matched(base); text += ` · "${st.query.trim()}" matches ${pct(m, base.v)} (${fmtW(m)})`; }
      if (focus !== base) text += ` · zoomed into ${focus.n}`;
      status.textContent = text;
      reset.disabled = focus === base;
    }

    sel.addEventListener('change', () => {
      const i = Number(sel.value);
      st.base = i >= 0 ? st.root.c[i] : st.root;
      st.focus = st.base;
      draw();
    });
    search.addEventListener('input', () => { st.query = search.value; draw(); });
    reset.addEventListener('click', () => { st.focus = st.base; draw(); });
    const frameAt = (ev) => {
      let n = ev.target;
      while (n && n !== s && !nodeOf.has(n)) n = n.parentNode;
      return n && n !== s ? n : null;
    };
    s.addEventListener('click', (ev) => {
      const g = frameAt(ev);
      if (!g) return;
      st.focus = nodeOf.get(g);
      hideTip();
      draw();
    });
    s.addEventListener('mousemove', (ev) => {
      const g = frameAt(ev);
      if (!g) { hideTip(); return; }
      const n = nodeOf.get(g);
      showTip(ev, n, () => {
        const self = n.v - n.c.reduce((a, c) => a + c.v, 0);
        return [{ text: n.n, cls: 'tt-title tt-rec' },
          { text: `${fmtW(n.v)} · ${pct(n.v, st.root.v)} of all` },
          diff ? { text: `baseline: ${fmtW(n.b)} (scaled) · ${n.v >= n.b ? '+' : '−'}${pct(Math.abs(n.v - n.b), Math.max(n.b, 1))}` } : null,
          st.base !== st.root ? { text: `${pct(n.v, st.base.v)} of ${st.base.n}` } : null,
          n.c.length && self > 0 ? { text: `self: ${fmtW(self)}`, cls: 'tt-muted' } : null,
          { text: n === st.base ? 'click: zoom out' : 'click: zoom in', cls: 'tt-muted' }];
      });
    });
    s.addEventListener('mouseleave', hideTip);
    draw();
  }

  /* ---------- metric charts ---------- */

  function buildCharts(host, W) {
    if (!mT.length || !groups.length) {
      note(host, 'No metrics were recorded in this window.');
      return;
    }
    const bar = elt('div', 'bar', null, host);
    elt('span', 'hint', 'Same time axis as the timeline: zoom there, or drag here to pan.', bar);
    rangeControls(elt('div', 'ctl', null, bar));
    const x0 = geo.x0, xEnd = geo.x0 + geo.w;

    groups.forEach((grp, gi) => {
      const name = String(grp.name ?? '');
      const unit = String(grp.unit ?? '');
      const series = arr(grp.series).map((se, i) => ({
        name: String(se?.name ?? `series ${i + 1}`), v: arr(se?.v), color: SERIES_COLORS[i % SERIES_COLORS.length],
      }));
      const last = gi === groups.length - 1;
      const wrap = elt('div', 'chart-wrap', null, host);
      const leg = elt('div', 'legend chart-legend', null, wrap);
      leg.style.paddingLeft = `${x0}px`;
      for (const se of series) legendItem(leg, 'line', se.name, se.color);

      const top = 6, ph = CHART_H, bottom = top + ph, H = bottom + (last ? 22 : 6);
      const c = svg('svg', {
        class: 'chart time', 'data-group': name, width: W, height: H, 'data-x0': x0, 'data-px-per-s': pxPerS(),
        'data-width': geo.w, 'font-family': UI_FONT, 'font-size': 11, role: 'img', 'aria-label': `${name} chart`,
      }, wrap);
      const clipId = `fr-clip-ch${gi}`;
      svg('rect', { x: x0, y: 0, width: geo.w, height: H }, svg('clipPath', { id: clipId }, svg('defs', {}, c)));

      // y range over the whole window (stable while zooming), from 0 when positive
      let lo = Infinity, hi = -Infinity;
      for (const se of series) for (const v of se.v) if (isNum(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      if (!Number.isFinite(lo)) { lo = 0; hi = 1; }
      lo = Math.min(0, lo);
      hi = niceCeil(hi);
      if (hi <= lo) hi = lo + 1;
      const Y = (v) => bottom - (v - lo) / (hi - lo) * ph;
      const withUnit = (v) => `${fmtNum(v)}${unit ? ` ${unit}` : ''}`;

      // The title, on two lines if it must (the y labels take the column's right end).
      const tFont = `600 12px ${UI_FONT}`, tW = x0 - 74;
      let line1 = name, line2 = '';
      if (textWidth(name, tFont) > tW) {
        const words = name.split(' ');
        let k = words.length - 1;
        while (k > 1 && textWidth(words.slice(0, k).join(' '), tFont) > tW) k--;
        line1 = fitText(words.slice(0, k).join(' '), tW, tFont);
        line2 = fitText(words.slice(k).join(' '), tW, tFont);
      }
      svg('text', { class: 'ctitle', x: 0, y: top + 11 }, c).textContent = line1;
      if (line2) svg('text', { class: 'ctitle', x: 0, y: top + 26 }, c).textContent = line2;
      svg('text', { class: 'ylab', x: x0 - 6, y: top + 9, 'text-anchor': 'end' }, c).textContent = withUnit(hi);
      svg('text', { class: 'ylab', x: x0 - 6, y: bottom, 'text-anchor': 'end' }, c).textContent = withUnit(lo);
      svg('rect', { class: 'pframe', x: x0, y: top, width: geo.w, height: ph }, c);
      svg('line', { class: 'hgrid', x1: x0, x2: xEnd, y1: r2((top + bottom) / 2), y2: r2((top + bottom) / 2) }, c);
      const grid = svg('g', { class: 'grid' }, c);
      const axis = svg('g', { class: 'axis' }, c);
      const plot = svg('g', { 'clip-path': `url(#${clipId})` }, c);
      const paths = series.map((se) => svg('path', { class: 'series', 'data-name': se.name, stroke: se.color }, plot));
      const marks = markers.map(([t, kind]) => [num(t), svg('line', { class: `marker ${cls(kind)}`, 'data-t': num(t), y1: top, y2: bottom }, plot)]);
      cursors.push(svg('line', { class: 'cursor', y1: top, y2: bottom, display: 'none' }, c));

      layouts.push(() => {
        drawGrid(grid, top, bottom, null);
        axis.replaceChildren();
        if (last) drawGrid(axis, bottom, bottom + 4, bottom + 16);
        // Only the samples in view (plus one on each side); null breaks the line.
        const i0 = Math.max(0, lowerBound(mT, view.t0) - 1);
        const i1 = Math.min(mT.length, lowerBound(mT, view.t1) + 1);
        series.forEach((se, si) => {
          let d = '', run = 0;
          for (let i = i0; i < i1; i++) {
            const v = se.v[i];
            if (!isNum(v)) { if (run === 1) d += 'h0'; run = 0; continue; }
            d += `${run ? 'L' : 'M'}${r2(X(mT[i]))} ${r2(Y(v))}`;
            run++;
          }
          if (run === 1) d += 'h0';   // a lone point: a dot (round caps)
          paths[si].setAttribute('d', d);
        });
        for (const [t, line] of marks) {
          const x = r2(X(t));
          line.setAttribute('x1', x);
          line.setAttribute('x2', x);
        }
      });

      attachTimeControls(c, (ev, x, y, inPlot) => {
        if (!inPlot) { hideTip(); setCursor(null); return; }
        const t = T(x);
        let i = clamp(lowerBound(mT, t), 0, mT.length - 1);
        if (i > 0 && t - mT[i - 1] < mT[i] - t) i--;
        setCursor(mT[i]);
        showTip(ev, `${gi}:${i}`, () => {
          let rows = series.map((se) => [se, se.v[i]]);
          const more = rows.length - 16;
          if (more > 0) rows = rows.filter((r) => isNum(r[1])).sort((a, b) => b[1] - a[1]).slice(0, 16);
          return [{ text: name }, { text: `at ${fmtAt(mT[i])}`, cls: 'tt-muted' },
            ...rows.map(([se, v]) => ({ text: `${se.name}: ${isNum(v) ? withUnit(v) : 'no value'}`, color: se.color })),
            more > 0 ? { text: `(the 16 highest of ${series.length})`, cls: 'tt-muted' } : null];
        });
      }, false);
    });
  }

  /* ---------- putting it together ---------- */

  let lastW = 0;
  function drawAll() {
    const q = (sel) => document.querySelector(sel);
    const hosts = [q('#timeline .view'), q('#flame-cpu .view'), q('#flame-offcpu .view'), q('#metrics .view'),
      q('#flame-diff .view')];
    // Read every width before drawing: a read after would force a layout of
    // all that was drawn so far.
    const widths = hosts.map((h) => (h ? Math.floor(h.clientWidth) : 0));
    const W = Math.max(600, widths[0] || Math.floor(document.body.clientWidth));
    geo = { x0: LABEL_W, w: Math.max(100, W - LABEL_W - PAD_R) };
    layouts.length = 0;
    cursors.length = 0;
    ranges.length = 0;
    // Each view is built off-document, then put in place at once.
    const put = (i, build, ...args) => {
      if (!hosts[i]) return;
      const frag = document.createDocumentFragment();
      if (bad) note(frag, 'The report data could not be read.'); else build(frag, ...args);
      hosts[i].replaceChildren(frag);
    };
    put(0, buildTimeline, W);
    put(1, buildFlame, Math.max(300, widths[1] || W), 'cpu');
    put(2, buildFlame, Math.max(300, widths[2] || W), 'offcpu');
    put(3, buildCharts, W);
    put(4, buildFlame, Math.max(300, widths[4] || W), 'cpu_diff');
    layouts.push(updateRanges);
    layoutAll();
    lastW = W;
  }

  drawAll();
  docEl.dataset.renderMs = String(Math.round(performance.now()));
  docEl.dataset.ready = '1';

  let resizeTimer = 0;
  addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      const v = document.querySelector('#timeline .view');
      if (v && Math.floor(v.clientWidth) !== lastW) { hideTip(); drawAll(); }
    }, 120);
  });

  // Page timings for the tests: DOMContentLoaded end and first paint.
  function setDcl() {
    const nav = performance.getEntriesByType ? performance.getEntriesByType('navigation')[0] : null;
    if (nav && nav.domContentLoadedEventEnd > 0) docEl.dataset.dclMs = String(Math.round(nav.domContentLoadedEventEnd));
  }
  document.addEventListener('DOMContentLoaded', () => setTimeout(setDcl, 0));
  addEventListener('load', setDcl);
  try {
    if (window.PerformanceObserver && arr(PerformanceObserver.supportedEntryTypes).includes('paint')) {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          if (e.name === 'first-contentful-paint' || !docEl.dataset.fpMs) docEl.dataset.fpMs = String(Math.round(e.startTime));
        }
      }).observe({ type: 'paint', buffered: true });
    }
  } catch (e) {
    /* no paint timing in this browser */
  }
})();
