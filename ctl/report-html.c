/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl report --format html: the report as one page that opens in any
 * browser, offline (an attachment to the incident ticket).  Its header
 * says what fired and what is missing; a timeline shows what the
 * processes involved were doing; flame graphs where the CPU and the
 * blocked time went; charts the metrics on the timeline's axis; and
 * tables what the text report lists, readable without JavaScript.
 *
 * The page is written here: its header and tables as HTML (text escaped
 * by GLib), the rest as one JSON object (json-c) that the script pasted
 * in (report-html.js, with report-html.css) draws.  Nothing is fetched.
 *
 * Bounded whatever the window: at most LANES_MAX processes get a lane; in
 * a lane, records shorter than a column of the timeline (the window /
 * COLUMNS) that start in the same column are one slice, and the columns
 * widen until the lane has at most LANE_SLICES_MAX slices; flame graph
 * frames too light to see are folded into "[other]" until a graph has at
 * most FLAME_NODES_MAX; metric rows beyond METRIC_ROWS_MAX are merged (the
 * highest value of each run of rows).  The page says what it merged.
 *
 * Long because the page is one pass over the window into one state
 * (struct page) that the lanes, the metrics, the flame graphs and the
 * tables are all written from; the flame graph trees are flame-tree.c's.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* GLib's MIN and MAX give way to lib/macro.h's (the same definitions) */
#undef MIN
#undef MAX
#include "../lib/crash-line.h"
#include "../lib/macro.h"
#include "../lib/out-buf.h"
#include "../lib/parse.h"
#include "../lib/pid-map.h"
#include "../lib/record-fields.h"
#include "../lib/wait-kind.h"
#include "coredump-link.h"
#include "flame-tree.h"
#include "frctl.h"
#include "output-folded.h"
#include "output-text.h"
#include "report.h"
#include "source-host.h"

#define LANES_MAX 16
#define COLUMNS 1000
#define LANE_SLICES_MAX 1000
#define LANE_INSTANTS_MAX 300
#define FLAME_NODES_MAX 15000
#define METRIC_ROWS_MAX 2000
#define SERIES_MAX 12
#define CPU_SERIES_MAX 8 /* more CPUs: their mean and the busiest */

extern const char fr_report_html_js[], fr_report_html_css[];

enum { K_OFFCPU, K_RUNQ, K_SYSCALL, K_BLOCK, K__MAX };
static const char *const kind_names[K__MAX] = { "offcpu", "runq", "syscall", "block" };

/* Why a process has a lane, in the order lanes are given. */
enum { WHY_NONE, WHY_TRIGGER, WHY_INVOLVED, WHY_BUSIEST, WHY_WAKER, WHY_SLOWEST };
static const char *const why_names[] = { "", "trigger", "involved", "busiest", "waker", "slowest" };

struct proc {
	uint32_t pid;
	char comm[FR_REC_COMM_MAX + 1];
	uint64_t samples, records, slowest;
	uint64_t woke;          /* the longest latency it ended, as a waker */
	uint64_t first_trigger; /* order of its first trigger + 1; 0: none */
	bool involved;          /* killed, crashed, OOM victim */
	bool kthread;           /* a kernel thread: its long sleeps are its idle */
	int lane;               /* -1: none */
};

struct slice {
	uint64_t t, dur; /* ns from the window's start */
	size_t item;
	uint8_t kind;
};

struct instant {
	uint64_t t;
	size_t item;
	const char *kind;
};

struct lane {
	struct proc *p;
	const char *why;
	char *exe;
	struct slice *s;
	size_t ns, caps;
	struct instant *in;
	size_t nin, capin;
};

struct series {
	char name[48];
	struct json_object *v; /* one value or null per row so far */
};

struct group {
	const char *name, *unit;
	struct series s[SERIES_MAX];
	unsigned n;
};

enum { G_CPU, G_MEM, G_PSI, G_LOAD, G_DISK, G__MAX };

struct page {
	struct fr_window *w;
	const struct frctl_window_args *a;
	const struct baseline *bl; /* the comparison's sides (report-baseline.h) */
	uint64_t t0, t1; /* the window: first record's start, last one's end */
	struct fr_pid_map procs;
	struct lane lanes[LANES_MAX];
	unsigned nlanes;
	uint64_t triggers; /* seen by survey(), in order */
	uint64_t lanes_omitted, slices_merged, slices_drawn, instants_omitted;
	/* records whose text the page holds (hover), by window index */
	size_t *recs;
	size_t nrecs, caprecs;
	struct json_object *markers, *gaps;
	struct json_object *wakes; /* [t, waker's lane, woken's lane, record] */
	uint64_t *cpu_last; /* wall of the last record of each CPU: where a gap starts */
	size_t ncpu_last;
	struct fr_folded *cpu, *offcpu;
	uint64_t flame_aggregated;
	struct json_object *mt; /* metric rows' times */
	size_t rows;
	struct group g[G__MAX];
	unsigned metric_stride;
	uint64_t series_dropped;
	bool oom;
};

/* A JSON string of @len bytes of @s, made valid UTF-8 (names come from
 * processes: any bytes). */
static struct json_object *jstr_n(const char *s, size_t len)
{
	gchar *v = g_utf8_make_valid(s, (gssize)len);
	struct json_object *o = json_object_new_string(v);

	g_free(v);
	return o;
}

static struct json_object *jstr(const char *s)
{
	return jstr_n(s, strlen(s));
}

/* Text for the page's HTML: valid UTF-8, escaped. */
static void put_html_n(FILE *out, const char *s, size_t len)
{
	gchar *v = g_utf8_make_valid(s, (gssize)len);
	gchar *e = g_markup_escape_text(v, -1);

	fputs(e, out);
	g_free(e);
	g_free(v);
}

static void put_html(FILE *out, const char *s)
{
	put_html_n(out, s, strlen(s));
}

static uint64_t rel_us(const struct page *pg, uint64_t wall)
{
	return wall > pg->t0 ? (wall - pg->t0) / 1000 : 0;
}

static int rec_index(struct page *pg, size_t item)
{
	if (pg->nrecs == pg->caprecs) {
		size_t c = MAX(pg->caprecs * 2, (size_t)256);
		size_t *v = realloc(pg->recs, c * sizeof(*v));
		if (!v)
			return -1;
		pg->recs = v;
		pg->caprecs = c;
	}
	pg->recs[pg->nrecs] = item;
	return (int)pg->nrecs++;
}

static bool crash_signal(uint32_t sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT || sig == SIGSYS;
}

static bool killed_by_signal(uint32_t status)
{
	return (status & 0x7f) && (status & 0x7f) != 0x7f;
}

static int wait_kind(uint16_t type)
{
	switch ((enum fr_record_type)type) {
	case FR_REC_OFFCPU: return K_OFFCPU;
	case FR_REC_RUNQ: return K_RUNQ;
	case FR_REC_SYSCALL: return K_SYSCALL;
	case FR_REC_BLOCK: return K_BLOCK;
	case FR_REC_EXEC:
	case FR_REC_EXIT:
	case FR_REC_FORK:
	case FR_REC_OOM:
	case FR_REC_SIGNAL:
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_GAP:
	case FR_REC_MARK:
	case FR_REC_METRICS:
	case FR_REC_TRIGGER:
	FR_REC_META_CASES
		break;
	}
	return -1;
}

/* Process @pid, named @comm (@len bytes) by thread @tid. */
static struct proc *proc_by(struct page *pg, uint32_t pid, uint32_t tid, const char *comm, size_t len)
{
	struct proc *p = fr_pid_map_get(&pg->procs, pid);

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || fr_pid_map_put(&pg->procs, pid, p, NULL) < 0) {
			free(p);
			return NULL;
		}
		p->pid = pid;
		p->lane = -1;
	}
	/* the main thread's latest name (after an exec, the program's), not
	 * a worker thread's */
	if (len && (tid == pid || !p->comm[0])) {
		memset(p->comm, 0, sizeof(p->comm));
		memcpy(p->comm, comm, MIN(len, sizeof(p->comm) - 1));
	}
	return p;
}

static struct proc *proc_of(struct page *pg, const struct fr_window_entry *e)
{
	return proc_by(pg, e->r.pid, e->r.tid, e->r.comm, e->r.comm_len);
}

/* The thread that woke offcpu record @r, when one did (not an
 * interrupt): a lane may show it, and the arrow to the wait. */
static bool woken_by_thread(const struct fr_record *r)
{
	return r->type == FR_REC_OFFCPU && r->sched.waker.pid &&
	       (r->sched.waker.context == FR_WAKER_IS_TASK || r->sched.waker.context == FR_WAKER_IS_KTHREAD);
}

/* First pass: the window's extent, and who did what. */
static void survey(struct page *pg, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	uint64_t end = e->wall_ns + fr_record_duration_ns(r);
	struct proc *p;
	int k;

	if (!pg->t0 || e->wall_ns < pg->t0)
		pg->t0 = e->wall_ns;
	pg->t1 = MAX(pg->t1, end);
	/* not what a process did: the mark's pid is frctl's */
	if (r->type == FR_REC_GAP || r->type == FR_REC_METRICS || r->type == FR_REC_MARK || r->pid == 0)
		return;
	p = proc_of(pg, e);
	if (!p)
		return;
	p->records++;
	p->kthread = e->kernel_thread;
	k = wait_kind(r->type);
	/* the slowest lanes are the latencies' (lib/wait-kind.h); their
	 * wakers held them up */
	if (k >= 0 && !fr_wait_is_idle(r, e->kernel_thread)) {
		p->slowest = MAX(p->slowest, fr_record_duration_ns(r));
		if (woken_by_thread(r)) {
			const struct fr_record_waker *w = &r->sched.waker;
			struct proc *wp = proc_by(pg, w->pid, w->tid, w->comm, w->comm_len);
			if (wp && wp != p)
				wp->woke = MAX(wp->woke, r->sched.duration_ns);
		}
	}
	switch ((enum fr_record_type)r->type) {
	case FR_REC_SAMPLE: p->samples++; break;
	case FR_REC_TRIGGER:
		if (!p->first_trigger)
			p->first_trigger = ++pg->triggers;
		break;
	case FR_REC_OOM: p->involved = true; pg->oom = true; break;
	case FR_REC_SIGNAL:
		if (crash_signal(r->signal.sig))
			p->involved = true;
		break;
	case FR_REC_EXIT:
		/* crashed, or SIGKILLed (the OOM killer's, or a watchdog's);
		 * not ended by a SIGTERM, which is how services stop */
		if (killed_by_signal(r->exit.status) &&
		    (crash_signal(r->exit.status & 0x7f) || (r->exit.status & 0x7f) == SIGKILL))
			p->involved = true;
		break;
	case FR_REC_EXEC:
	case FR_REC_FORK:
	case FR_REC_SYSCALL:
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK:
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	case FR_REC_GAP:
	case FR_REC_MARK:
	case FR_REC_METRICS:
	FR_REC_META_CASES
		break;
	}
}

static int cmp_trigger(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	return x->first_trigger < y->first_trigger ? -1 : x->first_trigger > y->first_trigger;
}

static int cmp_busiest(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->records != y->records)
		return x->records > y->records ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_woke(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	if (x->woke != y->woke)
		return x->woke > y->woke ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_slowest(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	if (x->slowest != y->slowest)
		return x->slowest > y->slowest ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A lane for a process of that name already: forty short-lived jq's are
 * one lane's worth of news among the busiest or the slowest. */
static bool name_has_lane(const struct page *pg, const struct proc *p)
{
	for (unsigned i = 0; i < pg->nlanes; i++)
		if (strcmp(pg->lanes[i].p->comm, p->comm) == 0)
			return true;
	return false;
}

static void give_lane(struct page *pg, struct proc *p, int why)
{
	if (p->lane >= 0 || pg->nlanes == LANES_MAX)
		return;
	p->lane = (int)pg->nlanes;
	pg->lanes[pg->nlanes++] = (struct lane){ .p = p, .why = why_names[why] };
}

/* The trigger's processes first (in the order they fired), then those
 * killed or crashed, then the busiest (samples, else records) and the
 * slowest (longest wait), one process of a name each. */
static int choose_lanes(struct page *pg)
{
	size_t n = pg->procs.n, i = 0, k = 0;
	struct proc **v = malloc(MAX(n, (size_t)1) * sizeof(*v)), *p;
	bool sampled;

	if (!v)
		return -ENOMEM;
	while ((p = fr_pid_map_next(&pg->procs, &i, NULL)))
		v[k++] = p;
	qsort(v, k, sizeof(*v), cmp_trigger);
	for (i = 0; i < k; i++)
		if (v[i]->first_trigger && pg->nlanes < LANES_MAX / 4)
			give_lane(pg, v[i], WHY_TRIGGER);
	for (i = 0; i < k; i++)
		if (v[i]->involved && pg->nlanes < LANES_MAX / 2)
			give_lane(pg, v[i], WHY_INVOLVED);
	/* the busiest: by samples; without sampling, by records (processes
	 * only: a kernel thread's records are its idle sleeps) */
	qsort(v, k, sizeof(*v), cmp_busiest);
	sampled = k && v[0]->samples;
	for (i = 0; i < k && pg->nlanes < LANES_MAX * 3 / 4; i++)
		if ((sampled ? v[i]->samples > 0 : !v[i]->kthread) && !name_has_lane(pg, v[i]))
			give_lane(pg, v[i], WHY_BUSIEST);
	/* those that held up the longest waits, as their wakers */
	qsort(v, k, sizeof(*v), cmp_woke);
	for (i = 0; i < k && pg->nlanes < LANES_MAX * 7 / 8; i++)
		if (v[i]->woke && !name_has_lane(pg, v[i]))
			give_lane(pg, v[i], WHY_WAKER);
	/* the slowest: processes, not kernel threads (their long sleeps
	 * are their idle) */
	qsort(v, k, sizeof(*v), cmp_slowest);
	for (i = 0; i < k && pg->nlanes < LANES_MAX; i++)
		if (v[i]->slowest && !v[i]->kthread && !name_has_lane(pg, v[i]))
			give_lane(pg, v[i], WHY_SLOWEST);
	for (i = 0; i < k; i++)
		if (v[i]->lane < 0)
			pg->lanes_omitted++;
	free(v);
	return 0;
}

static void lane_slice(struct lane *l, uint64_t t, uint64_t dur, size_t item, int kind)
{
	if (l->ns == l->caps) {
		size_t c = MAX(l->caps * 2, (size_t)64);
		struct slice *v = realloc(l->s, c * sizeof(*v));
		if (!v)
			return;
		l->s = v;
		l->caps = c;
	}
	l->s[l->ns++] = (struct slice){ t, dur, item, (uint8_t)kind };
}

static void lane_instant(struct page *pg, struct lane *l, uint64_t t, size_t item, const char *kind)
{
	if (l->nin == LANE_INSTANTS_MAX) {
		pg->instants_omitted++;
		return;
	}
	if (l->nin == l->capin) {
		size_t c = MAX(l->capin * 2, (size_t)16);
		struct instant *v = realloc(l->in, c * sizeof(*v));
		if (!v)
			return;
		l->in = v;
		l->capin = c;
	}
	l->in[l->nin++] = (struct instant){ t, item, kind };
}

static void add_marker(struct page *pg, uint64_t wall, size_t item, const char *kind)
{
	struct json_object *m = json_object_new_array_ext(3);
	int rec = rec_index(pg, item);

	json_object_array_add(m, json_object_new_int64((int64_t)rel_us(pg, wall)));
	json_object_array_add(m, json_object_new_string(kind));
	json_object_array_add(m, json_object_new_int(rec));
	json_object_array_add(pg->markers, m);
}

/* An arrow from the lane of the thread that woke offcpu record @e
 * (item @i, of @p) to @p's, at the wakeup, when both have a lane. */
static void add_wake(struct page *pg, const struct fr_window_entry *e, size_t i, const struct proc *p)
{
	const struct proc *wp = fr_pid_map_get(&pg->procs, e->r.sched.waker.pid);
	struct json_object *a;

	if (!wp || wp->lane < 0 || wp == p)
		return;
	a = json_object_new_array_ext(4);
	json_object_array_add(a, json_object_new_int64((int64_t)rel_us(pg, e->wall_ns + e->r.sched.waker.delay_ns)));
	json_object_array_add(a, json_object_new_int(wp->lane));
	json_object_array_add(a, json_object_new_int(p->lane));
	json_object_array_add(a, json_object_new_int(rec_index(pg, i)));
	json_object_array_add(pg->wakes, a);
}

/* A gap record counts what one CPU lost since its previous record there:
 * the region from that record to this one. */
static void add_gap(struct page *pg, const struct fr_window_entry *e)
{
	uint64_t from = e->r.cpu < pg->ncpu_last && pg->cpu_last[e->r.cpu] ? pg->cpu_last[e->r.cpu] : pg->t0;
	struct json_object *g = json_object_new_array_ext(3);

	json_object_array_add(g, json_object_new_int64((int64_t)rel_us(pg, from)));
	json_object_array_add(g, json_object_new_int64((int64_t)(rel_us(pg, e->wall_ns) - rel_us(pg, from))));
	json_object_array_add(g, json_object_new_int64((int64_t)e->r.gap.lost));
	json_object_array_add(pg->gaps, g);
}

static void note_cpu(struct page *pg, const struct fr_window_entry *e)
{
	if (e->r.cpu >= pg->ncpu_last) {
		size_t n = MAX((size_t)e->r.cpu + 1, pg->ncpu_last * 2);
		uint64_t *v;
		if (e->r.cpu >= 65536)
			return;
		v = realloc(pg->cpu_last, n * sizeof(*v));
		if (!v)
			return;
		memset(v + pg->ncpu_last, 0, (n - pg->ncpu_last) * sizeof(*v));
		pg->cpu_last = v;
		pg->ncpu_last = n;
	}
	pg->cpu_last[e->r.cpu] = e->wall_ns;
}

/* --- metrics: a row per metrics record, a series per value --- */

static void series_put(struct page *pg, unsigned gi, const char *name, double v)
{
	struct group *g = &pg->g[gi];
	struct series *s = NULL;

	for (unsigned i = 0; i < g->n; i++)
		if (strcmp(g->s[i].name, name) == 0)
			s = &g->s[i];
	if (!s) {
		if (g->n == SERIES_MAX) {
			pg->series_dropped++;
			return;
		}
		s = &g->s[g->n++];
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->v = json_object_new_array();
	}
	/* rows where it had no value: null */
	while (json_object_array_length(s->v) + 1 < pg->rows)
		json_object_array_add(s->v, NULL);
	if (json_object_array_length(s->v) < pg->rows)
		json_object_array_add(s->v, json_object_new_double(v));
}

static bool get_double(struct json_object *o, const char *key, double *ret)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	*ret = json_object_get_double(v);
	return true;
}

static void add_metrics(struct page *pg, const struct fr_window_entry *e)
{
	struct json_object *m = fr_record_metrics(&e->r), *v, *x;
	double d;

	if (!m)
		return;
	pg->rows++;
	json_object_array_add(pg->mt, json_object_new_int64((int64_t)rel_us(pg, e->wall_ns)));
	if (json_object_object_get_ex(m, "cpus", &v) && json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);
		double sum = 0, top = 0;
		unsigned cnt = 0;
		for (size_t i = 0; i < n; i++) {
			char name[32];
			if (!get_double(json_object_array_get_idx(v, i), "idle", &d))
				continue;
			d = 100.0 - d;
			sum += d;
			top = MAX(top, d);
			cnt++;
			if (n <= CPU_SERIES_MAX) {
				snprintf(name, sizeof(name), "cpu%zu", i);
				series_put(pg, G_CPU, name, d);
			}
		}
		if (n > CPU_SERIES_MAX && cnt) {
			series_put(pg, G_CPU, "mean", sum / cnt);
			series_put(pg, G_CPU, "busiest CPU", top);
		}
	}
	if (json_object_object_get_ex(m, "memory", &v) && get_double(v, "available_kb", &d))
		series_put(pg, G_MEM, "available", d / 1024);
	if (json_object_object_get_ex(m, "pressure", &v)) {
		static const char *const res[] = { "cpu", "memory", "io" };
		for (unsigned i = 0; i < ELEMENTSOF(res); i++) {
			struct json_object *r, *some;
			if (json_object_object_get_ex(v, res[i], &r) && json_object_object_get_ex(r, "some", &some) &&
			    get_double(some, "avg10", &d))
				series_put(pg, G_PSI, res[i], d);
		}
	}
	if (json_object_object_get_ex(m, "load", &v) && json_object_is_type(v, json_type_array)) {
		static const char *const names[] = { "1 min", "5 min", "15 min" };
		for (size_t i = 0; i < json_object_array_length(v) && i < ELEMENTSOF(names); i++) {
			x = json_object_array_get_idx(v, i);
			if (json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int))
				series_put(pg, G_LOAD, names[i], json_object_get_double(x));
		}
	}
	if (json_object_object_get_ex(m, "disk_latency", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, dev, lat) {
			static const char *const qs[] = { "p50_us", "p99_us" };
			for (unsigned i = 0; i < ELEMENTSOF(qs); i++) {
				char name[48];
				if (!get_double(lat, qs[i], &d))
					continue;
				snprintf(name, sizeof(name), "%.32s %.3s", dev, qs[i]);
				series_put(pg, G_DISK, name, d / 1000);
			}
		}
	}
	json_object_put(m);
}

/* More rows than a chart can show: runs of @stride rows become one, at
 * the run's first time with each series' highest value (a spike stays). */
static struct json_object *merge_rows(struct json_object *a, size_t rows, unsigned stride, bool times)
{
	struct json_object *out = json_object_new_array();

	for (size_t i = 0; i < rows; i += stride) {
		struct json_object *best = NULL;
		if (times)
			best = json_object_array_get_idx(a, i);
		else
			for (size_t j = i; j < i + stride && j < rows; j++) {
				struct json_object *x = json_object_array_get_idx(a, j);
				if (x && (!best || json_object_get_double(x) > json_object_get_double(best)))
					best = x;
			}
		json_object_array_add(out, json_object_get(best));
	}
	json_object_put(a);
	return out;
}

static struct json_object *metrics_json(struct page *pg)
{
	struct json_object *o = json_object_new_object(), *groups = json_object_new_array();

	pg->metric_stride = pg->rows > METRIC_ROWS_MAX ? (unsigned)((pg->rows + METRIC_ROWS_MAX - 1) / METRIC_ROWS_MAX) : 1;
	if (pg->metric_stride > 1)
		pg->mt = merge_rows(pg->mt, pg->rows, pg->metric_stride, true);
	json_object_object_add(o, "t", json_object_get(pg->mt));
	for (unsigned gi = 0; gi < G__MAX; gi++) {
		struct group *g = &pg->g[gi];
		struct json_object *jg, *ser;
		if (!g->n)
			continue;
		jg = json_object_new_object();
		ser = json_object_new_array();
		json_object_object_add(jg, "name", json_object_new_string(g->name));
		json_object_object_add(jg, "unit", json_object_new_string(g->unit));
		for (unsigned i = 0; i < g->n; i++) {
			struct json_object *js = json_object_new_object();
			while (json_object_array_length(g->s[i].v) < pg->rows)
				json_object_array_add(g->s[i].v, NULL);
			if (pg->metric_stride > 1)
				g->s[i].v = merge_rows(g->s[i].v, pg->rows, pg->metric_stride, false);
			json_object_object_add(js, "name", jstr(g->s[i].name));
			json_object_object_add(js, "v", json_object_get(g->s[i].v));
			json_object_array_add(ser, js);
		}
		json_object_object_add(jg, "series", ser);
		json_object_array_add(groups, jg);
	}
	json_object_object_add(o, "groups", groups);
	return o;
}

/* --- the timeline --- */

/* Second pass: what the lanes, markers, gaps, charts and graphs show. */
static void collect(struct page *pg, size_t i, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct proc *p = r->pid ? fr_pid_map_get(&pg->procs, r->pid) : NULL;
	struct lane *l = p && p->lane >= 0 ? &pg->lanes[p->lane] : NULL;
	uint64_t t = e->wall_ns - pg->t0;
	int k = wait_kind(r->type);

	switch ((enum fr_record_type)r->type) {
	case FR_REC_GAP: add_gap(pg, e); break;
	case FR_REC_METRICS: add_metrics(pg, e); break;
	case FR_REC_TRIGGER: add_marker(pg, e->wall_ns, i, "trigger"); break;
	case FR_REC_MARK: add_marker(pg, e->wall_ns, i, "mark"); break;
	case FR_REC_SAMPLE: (void)fr_folded_add(pg->cpu, pg->w, e, 1); break;
	case FR_REC_OFFCPU: (void)fr_folded_add(pg->offcpu, pg->w, e, MAX(r->sched.duration_ns / 1000, 1ULL)); break;
	case FR_REC_EXEC:
	case FR_REC_EXIT:
	case FR_REC_FORK:
	case FR_REC_SYSCALL:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK:
	case FR_REC_OOM:
	case FR_REC_SIGNAL:
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	FR_REC_META_CASES
		break;
	}
	note_cpu(pg, e);
	if (!l)
		return;
	if (!l->exe && e->exe)
		l->exe = strndup(e->exe, e->exe_len);
	if (k >= 0) {
		lane_slice(l, t, fr_record_duration_ns(r), i, k);
		if (woken_by_thread(r))
			add_wake(pg, e, i, p);
		return;
	}
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC: lane_instant(pg, l, t, i, "exec"); break;
	case FR_REC_EXIT: /* the process's, not each thread's */
		if (r->tid == r->pid)
			lane_instant(pg, l, t, i, "exit");
		break;
	case FR_REC_FORK: lane_instant(pg, l, t, i, "fork"); break;
	case FR_REC_SIGNAL: lane_instant(pg, l, t, i, crash_signal(r->signal.sig) ? "crash" : "signal"); break;
	case FR_REC_OOM: lane_instant(pg, l, t, i, "oom"); break;
	case FR_REC_TCP: lane_instant(pg, l, t, i, "tcp"); break;
	/* the waits are slices, above; the rest are drawn across lanes or not at all */
	case FR_REC_SYSCALL:
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK:
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_GAP:
	case FR_REC_MARK:
	case FR_REC_METRICS:
	case FR_REC_TRIGGER:
	FR_REC_META_CASES
		break;
	}
}

/* A merged slice in the making: short records of one kind in one column. */
struct run {
	bool open;
	uint64_t col, t, end, count;
	size_t item;
};

static void run_emit(struct page *pg, struct json_object *arr, const struct run *u, int kind)
{
	struct json_object *s = json_object_new_array_ext(5);

	json_object_array_add(s, json_object_new_int64((int64_t)(u->t / 1000)));
	json_object_array_add(s, json_object_new_int64((int64_t)((u->end - u->t) / 1000)));
	json_object_array_add(s, json_object_new_string(kind_names[kind]));
	json_object_array_add(s, json_object_new_int(u->count == 1 ? rec_index(pg, u->item) : -1));
	json_object_array_add(s, json_object_new_int64((int64_t)u->count));
	json_object_array_add(arr, s);
	pg->slices_drawn++;
	if (u->count > 1)
		pg->slices_merged += u->count;
}

/* The slices of @l with records shorter than @col_ns merged per column
 * and kind; how many slices that makes (written to @arr when not NULL). */
static size_t lane_slices(struct page *pg, const struct lane *l, uint64_t col_ns, struct json_object *arr)
{
	struct run runs[K__MAX] = {};
	size_t n = 0;

	for (size_t i = 0; i < l->ns; i++) {
		const struct slice *s = &l->s[i];
		struct run *u = &runs[s->kind];
		struct run one = { true, 0, s->t, s->t + s->dur, 1, s->item };

		if (s->dur >= col_ns) {
			n++;
			if (arr)
				run_emit(pg, arr, &one, s->kind);
			continue;
		}
		if (u->open && u->col == s->t / col_ns) {
			u->end = MAX(u->end, s->t + s->dur);
			u->count++;
			continue;
		}
		if (u->open) {
			n++;
			if (arr)
				run_emit(pg, arr, u, s->kind);
		}
		*u = one;
		u->col = s->t / col_ns;
	}
	for (int k = 0; k < K__MAX; k++)
		if (runs[k].open) {
			n++;
			if (arr)
				run_emit(pg, arr, &runs[k], k);
		}
	return n;
}

static struct json_object *lanes_json(struct page *pg)
{
	struct json_object *lanes = json_object_new_array();
	uint64_t col0 = MAX((pg->t1 - pg->t0) / COLUMNS, (uint64_t)1);

	for (unsigned li = 0; li < pg->nlanes; li++) {
		struct lane *l = &pg->lanes[li];
		struct json_object *o = json_object_new_object(), *sl = json_object_new_array(),
				   *in = json_object_new_array();
		uint64_t col = col0;

		while (lane_slices(pg, l, col, NULL) > LANE_SLICES_MAX && col < pg->t1 - pg->t0)
			col *= 2;
		(void)lane_slices(pg, l, col, sl);
		for (size_t i = 0; i < l->nin; i++) {
			struct json_object *x = json_object_new_array_ext(3);
			json_object_array_add(x, json_object_new_int64((int64_t)(l->in[i].t / 1000)));
			json_object_array_add(x, json_object_new_string(l->in[i].kind));
			json_object_array_add(x, json_object_new_int(rec_index(pg, l->in[i].item)));
			json_object_array_add(in, x);
		}
		json_object_object_add(o, "pid", json_object_new_int64(l->p->pid));
		json_object_object_add(o, "name", jstr(l->p->comm));
		json_object_object_add(o, "exe", l->exe ? jstr(l->exe) : NULL);
		json_object_object_add(o, "why", json_object_new_string(l->why));
		json_object_object_add(o, "slices", sl);
		json_object_object_add(o, "instants", in);
		json_object_array_add(lanes, o);
	}
	return lanes;
}

/* --- flame graphs (flame-tree.h) --- */

static struct json_object *flame(struct page *pg, struct fr_folded *f)
{
	return flame_tree_json(f, FLAME_NODES_MAX, &pg->flame_aggregated);
}

/* --- the data as a whole --- */

static struct json_object *records_json(struct page *pg)
{
	struct json_object *a = json_object_new_array_ext((int)pg->nrecs);
	struct fr_text *t = fr_text_new(FR_TEXT_NO_DATE);
	struct fr_out o;

	if (!t || fr_out_init(&o, NULL) < 0) {
		fr_text_free(t);
		return a;
	}
	for (size_t i = 0; i < pg->nrecs; i++) {
		struct fr_window_entry e;
		o.len = 0;
		if (fr_window_get(pg->w, pg->recs[i], &e) == 0)
			fr_text_print(t, &o, pg->w, &e);
		while (o.len && o.p[o.len - 1] == '\n')
			o.len--;
		json_object_array_add(a, jstr_n(o.p ? o.p : "", o.len));
	}
	(void)fr_out_end(&o);
	fr_text_free(t);
	return a;
}

static struct json_object *data_json(struct page *pg)
{
	struct json_object *d = json_object_new_object(), *win = json_object_new_object(),
			   *fl = json_object_new_object();
	char start[64];

	json_object_object_add(d, "version", json_object_new_int(1));
	json_object_object_add(win, "start", json_object_new_string(fr_format_rfc3339(pg->t0, start, sizeof(start))));
	json_object_object_add(win, "duration_us", json_object_new_int64((int64_t)rel_us(pg, pg->t1)));
	json_object_object_add(d, "window", win);
	json_object_object_add(d, "lanes", lanes_json(pg));
	json_object_object_add(d, "lanes_omitted", json_object_new_int64((int64_t)pg->lanes_omitted));
	json_object_object_add(d, "slices_merged", json_object_new_int64((int64_t)pg->slices_merged));
	json_object_object_add(d, "markers", json_object_get(pg->markers));
	json_object_object_add(d, "gaps", json_object_get(pg->gaps));
	json_object_object_add(d, "wakes", json_object_get(pg->wakes));
	json_object_object_add(fl, "cpu", flame(pg, pg->cpu));
	/* against the baseline: the window's CPU stacks, the baseline's
	 * weight beside each frame */
	if (pg->bl->active && pg->bl->now.cpu && side_usable(&pg->bl->base, &pg->bl->now))
		json_object_object_add(fl, "cpu_diff", flame_diff_json(pg->bl->now.cpu, pg->bl->base.cpu,
								       side_span_s(&pg->bl->now) / side_span_s(&pg->bl->base),
								       FLAME_NODES_MAX, &pg->flame_aggregated));
	json_object_object_add(fl, "offcpu", flame(pg, pg->offcpu));
	json_object_object_add(fl, "cpu_unit", json_object_new_string("samples"));
	json_object_object_add(fl, "offcpu_unit", json_object_new_string("us"));
	json_object_object_add(fl, "aggregated", json_object_new_int64((int64_t)pg->flame_aggregated));
	json_object_object_add(d, "flame", fl);
	json_object_object_add(d, "metrics", metrics_json(pg));
	/* last: the lanes and markers above numbered the records they show */
	json_object_object_add(d, "records", records_json(pg));
	return d;
}

/* The data inside <script type="application/json">: json-c writes '/' as
 * "\/", so no "</script>" can end the element early; '<' is written as
 * \u003c besides, so that no "<!--" can change how the element is read.
 * (Outside strings JSON has no '<': the result is the same JSON.) */
static void put_json_in_html(FILE *out, struct json_object *d)
{
	const char *s = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);

	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "<");
		fwrite(p, 1, n, out);
		p += n;
		if (*p == '<') {
			fputs("\\u003c", out);
			p++;
		}
	}
}

/* --- the HTML around it: header and tables --- */

/* One record as frctl dump prints it (without the date). */
static void put_entry(FILE *out, struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_text *t = fr_text_new(FR_TEXT_NO_DATE);
	struct fr_out o;

	if (!t || fr_out_init(&o, NULL) < 0) {
		fr_text_free(t);
		return;
	}
	fr_text_print(t, &o, w, e);
	while (o.len && o.p[o.len - 1] == '\n')
		o.len--;
	put_html_n(out, o.p ? o.p : "", o.len);
	(void)fr_out_end(&o);
	fr_text_free(t);
}

static void put_dd(FILE *out, const char *dt, const char *dd)
{
	fputs("<dt>", out);
	put_html(out, dt);
	fputs("</dt><dd>", out);
	put_html(out, dd);
	fputs("</dd>\n", out);
}

static void put_header(FILE *out, const struct frctl_source *s, const struct report *rp, const struct page *pg)
{
	const char *id = frctl_meta_string(s->meta, "id"), *reason = frctl_meta_string(s->meta, "reason");
	const char *host, *kernel;
	struct json_object *rules;
	char a[64], b[64], d[32], *line = NULL;
	size_t len = 0;
	FILE *m;

	/* the machine that recorded the window, whoever reads it */
	frctl_hosts_window(s->hosts, pg->w, &host, &kernel);
	fputs("<header id=\"summary\">\n<h1>", out);
	if (id) {
		fputs("Incident ", out);
		put_html(out, id);
	} else {
		fputs("flightrec report: ", out);
		put_html(out, s->name);
	}
	fputs("</h1>\n<dl>\n", out);
	put_dd(out, "Host", host ? host : "unknown");
	put_dd(out, "Kernel", kernel ? kernel : "unknown");
	if (pg->w->nchunks) {
		char boot[40];
		put_dd(out, "Boot", fr_format_boot_id(pg->w->chunks[pg->w->nchunks - 1].boot_id, boot, sizeof(boot)));
	}
	if (rp->records) {
		m = open_memstream(&line, &len);
		if (m) {
			fprintf(m, "%s to %s (%s), %" PRIu64 " records", fr_format_rfc3339(pg->t0, a, sizeof(a)),
				fr_format_rfc3339(pg->t1, b, sizeof(b)), fr_format_duration(pg->t1 - pg->t0, d, sizeof(d)),
				rp->records);
			if (fclose(m) == 0)
				put_dd(out, "Window", line);
			free(line);
			line = NULL;
		}
	} else
		put_dd(out, "Window", "no records");
	if (json_object_object_get_ex(s->meta, "rules", &rules)) {
		fputs("<dt>Fired</dt><dd>rules ", out);
		put_html(out, json_object_to_json_string_ext(rules, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		if (reason) {
			fputs(", reason &#8220;", out);
			put_html(out, reason);
			fputs("&#8221;", out);
		}
		fputs("</dd>\n", out);
	} else if (rp->triggers.n)
		fprintf(out, "<dt>Fired</dt><dd>%u trigger%s in the window (below)</dd>\n", rp->triggers.n,
			rp->triggers.n == 1 ? "" : "s");
	if (rp->gaps_lost)
		fprintf(out,
			"<dt>Records lost</dt><dd class=\"warn\">%" PRIu64 " records lost (%" PRIu64
			" gaps): the shaded regions of the timeline are incomplete</dd>\n",
			rp->gaps_lost, rp->gap_records);
	else
		fputs("<dt>Records lost</dt><dd>none: nothing was lost in this window</dd>\n", out);
	fprintf(out, "<dt>Drawn</dt><dd>%u process%s with a lane", pg->nlanes, pg->nlanes == 1 ? "" : "es");
	if (pg->lanes_omitted)
		fprintf(out, ", %" PRIu64 " more without (their records are in the tables and graphs)", pg->lanes_omitted);
	if (pg->slices_merged)
		fprintf(out, "; %" PRIu64 " short records merged into slices of their column", pg->slices_merged);
	if (pg->instants_omitted)
		fprintf(out, "; %" PRIu64 " events past %d in a lane not drawn", pg->instants_omitted, LANE_INSTANTS_MAX);
	if (pg->flame_aggregated)
		fprintf(out, "; %" PRIu64 " light flame graph frames folded into [other]", pg->flame_aggregated);
	if (pg->metric_stride > 1)
		fprintf(out, "; metrics: each point the highest of %u rows", pg->metric_stride);
	if (pg->series_dropped)
		fprintf(out, "; %" PRIu64 " metric values of series past %d in a chart not drawn", pg->series_dropped,
			SERIES_MAX);
	fputs("</dd>\n</dl>\n</header>\n", out);
}

/* Where it crashed, at the top: each fatal signal's line
 * (lib/crash-line.h), its stack as a debugger's backtrace (the first
 * CRASH_STACKS), and the core dump systemd-coredump kept of it. */
#define CRASH_STACKS 3
/* What changed (what-changed.h), most unusual first: its lines as the
 * text prints them. */
#define CHANGES_SHOWN 30
static void put_changes(FILE *out, const struct baseline *bl, struct json_object *changes)
{
	size_t n = changes ? json_object_array_length(changes) : 0;
	char a[64], b[64], d[32];

	if (!bl->active)
		return;
	fr_format_rfc3339(bl->base.since, a, sizeof(a));
	fr_format_rfc3339(bl->base.until, b, sizeof(b));
	fr_format_duration(bl->base.until - bl->base.since, d, sizeof(d));
	fputs("<section id=\"changed\">\n<h2>What changed</h2>\n<p>", out);
	if (!side_usable(&bl->base, &bl->now))
		fprintf(out, "No baseline: %" PRIu64 " records in the %s before the window.</p>\n</section>\n",
			bl->base.records, d);
	else {
		fprintf(out, "Against %s to %s (%s, %" PRIu64 " records), most unusual first%s</p>\n", a, b, d,
			bl->base.records, n ? ":" : ": nothing beyond the noise.");
		if (n)
			fputs("<ol class=\"changes\">\n", out);
		for (size_t i = 0; i < n && i < CHANGES_SHOWN; i++) {
			struct json_object *c = json_object_array_get_idx(changes, i), *t, *dir;
			fputs("<li", out);
			if (json_object_object_get_ex(c, "direction", &dir)) {
				fputs(" class=\"", out);
				put_html(out, json_object_get_string(dir));
				fputc('"', out);
			}
			fputc('>', out);
			if (json_object_object_get_ex(c, "text", &t))
				put_html(out, json_object_get_string(t));
			fputs("</li>\n", out);
		}
		if (n)
			fputs("</ol>\n", out);
		if (n > CHANGES_SHOWN)
			fprintf(out, "<p>And %zu more: <code>frctl report --format json</code> lists them all.</p>\n",
				n - CHANGES_SHOWN);
		fputs("</section>\n", out);
	}
}

static void put_crashes(FILE *out, struct fr_window *w, const struct report *rp)
{
	struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
	struct frctl_coredumps journal = {};
	struct frctl_coredump cd;
	char line[1024], name[512];

	if (!rp->signals.n)
		return;
	fprintf(out, "<section id=\"crash\">\n<h2>Where it crashed: %" PRIu64 " fatal signal%s</h2>\n",
		rp->signals.n + rp->signals.more, rp->signals.n + rp->signals.more == 1 ? "" : "s");
	for (unsigned i = 0; i < rp->signals.n; i++) {
		const struct fr_window_entry *e = &rp->signals.v[i];
		int n = fr_window_frames(w, e, f, FR_FRAMES_EXPANDED_MAX), first;

		n = MAX(n, 0);
		first = fr_crash_first_frame(&e->r, n);
		fputs("<p class=\"crash-line\">", out);
		put_html(out, fr_crash_line(&e->r, f, n, 6, line, sizeof(line)));
		fputs("</p>\n", out);
		if (i < CRASH_STACKS && first < n) {
			fputs("<ol class=\"stack\" start=\"0\">\n", out);
			for (int j = first; j < n; j++) {
				uint32_t ml;
				const char *m = fr_frame_module_base(&f[j], &ml);
				fputs("<li>", out);
				put_html(out, fr_frame_name(&f[j], true, name, sizeof(name)));
				if (f[j].inlined)
					fputs(" <span class=\"module\">(inlined)</span>", out);
				else if (f[j].sym && m) {
					fputs(" <span class=\"module\">(", out);
					put_html_n(out, m, ml);
					fputs(")</span>", out);
				}
				fputs("</li>\n", out);
			}
			fputs("</ol>\n", out);
		}
		if (frctl_coredump_find(&journal, w, e, &cd)) {
			fputs("<p class=\"coredump\">Core dump kept by systemd-coredump", out);
			if (cd.storage[0]) {
				fputs(" in <code>", out);
				put_html(out, cd.storage);
				fputs("</code>", out);
			}
			fputs("; open it with <code>", out);
			put_html(out, cd.command);
			fputs("</code></p>\n", out);
		}
	}
	frctl_coredumps_done(&journal);
	fputs("</section>\n", out);
}

static void table_start(FILE *out, const char *title, uint64_t count, const char *c1, const char *c2)
{
	fputs("<h3>", out);
	put_html(out, title);
	if (count)
		fprintf(out, " <span class=\"count\">(%" PRIu64 ")</span>", count);
	fprintf(out, "</h3>\n<table class=\"data\"><thead><tr><th>%s</th><th>%s</th></tr></thead><tbody>\n", c1, c2);
}

static void put_top(FILE *out, struct fr_window *w, const char *title, const struct top *t)
{
	char d[32];

	if (!t->count)
		return;
	table_start(out, title, t->count, "took", "record");
	for (unsigned i = 0; i < t->n; i++) {
		fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"rec\">", fr_format_duration(t->v[i], d, sizeof(d)));
		put_entry(out, w, &t->e[i]);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static void put_list(FILE *out, struct fr_window *w, const char *title, const struct list *l)
{
	char tm[64];

	if (!l->n)
		return;
	table_start(out, title, l->n + l->more, "at", "record");
	for (unsigned i = 0; i < l->n; i++) {
		fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"rec\">",
			fr_format_rfc3339(l->v[i].wall_ns, tm, sizeof(tm)));
		put_entry(out, w, &l->v[i]);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static void put_counts(FILE *out, const char *title, struct fr_counts *c, uint64_t total, unsigned max)
{
	size_t k = fr_counts_sort(c, true);

	if (!k)
		return;
	table_start(out, title, 0, "share", "");
	for (size_t i = 0; i < k && i < max; i++) {
		fprintf(out, "<tr><td class=\"num\">%.1f%%</td><td>",
			total ? 100.0 * (double)c->v[i].n / (double)total : 0.0);
		put_html(out, c->v[i].key);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static void put_extreme(FILE *out, const char *what, const struct extreme *x, int decimals, double scale,
			const char *unit)
{
	char t[64];

	if (x->seen)
		fprintf(out, "<tr><td>%s</td><td class=\"num\">%.*f %s</td><td>%s</td></tr>\n", what, decimals,
			x->v * scale, unit, fr_format_rfc3339(x->wall, t, sizeof(t)));
}

static void put_tables(FILE *out, struct fr_window *w, struct report *rp)
{
	fputs("<section id=\"tables\">\n<h2>Tables</h2>\n", out);
	if (rp->triggers.n) {
		char tm[64];
		table_start(out, "Triggers in the window", rp->triggers.n + rp->triggers.more, "at", "trigger, and the record it fired on");
		for (unsigned i = 0; i < rp->triggers.n; i++) {
			fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"rec\">",
				fr_format_rfc3339(rp->triggers.v[i].wall_ns, tm, sizeof(tm)));
			put_entry(out, w, &rp->triggers.v[i]);
			if (rp->has_cause[i]) {
				fputs("<br>fired on: ", out);
				put_entry(out, w, &rp->causes[i]);
			}
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
	}
	put_list(out, w, "Marks", &rp->marks);
	put_top(out, w, "Slowest syscalls", &rp->syscall);
	put_top(out, w, "Longest off-CPU waits", &rp->offcpu);
	put_top(out, w, "Longest run-queue waits", &rp->runq);
	put_top(out, w, "Slowest block I/O", &rp->block);
	if (rp->samples) {
		put_counts(out, "CPU by process", &rp->procs, rp->samples, TOP);
		put_counts(out, "CPU by function (where the CPU was)", &rp->self, rp->samples, TOP + 3);
	}
	fprintf(out,
		"<h3>Processes</h3>\n<p>%" PRIu64 " started (exec), %" PRIu64 " forks, %" PRIu64 " exited (%" PRIu64
		" non-zero)</p>\n",
		rp->execs, rp->forks, rp->exits, rp->exits_failed);
	if (rp->execs)
		put_counts(out, "Most started", &rp->started, rp->execs, 3);
	put_list(out, w, "Killed by a signal", &rp->killed);
	put_list(out, w, "OOM kills", &rp->ooms);
	if (rp->load.seen || rp->mem.seen) {
		fputs("<h3>Metric extremes</h3>\n<table class=\"data\"><thead><tr><th>what</th><th>value</th><th>at</th></tr>"
		      "</thead><tbody>\n", out);
		put_extreme(out, "highest CPU busy (one CPU)", &rp->busy, 0, 1, "%");
		put_extreme(out, "highest load (1 min)", &rp->load, 2, 1, "");
		put_extreme(out, "least memory available", &rp->mem, 0, 1.0 / 1024, "MiB");
		put_extreme(out, "highest CPU pressure (some)", &rp->psi_cpu, 2, 1, "%");
		put_extreme(out, "highest memory pressure", &rp->psi_mem, 2, 1, "%");
		put_extreme(out, "highest I/O pressure", &rp->psi_io, 2, 1, "%");
		fputs("</tbody></table>\n", out);
	}
	fputs("</section>\n", out);
}

static void page_done(struct page *pg)
{
	size_t i = 0;
	struct proc *p;

	while ((p = fr_pid_map_next(&pg->procs, &i, NULL)))
		free(p);
	fr_pid_map_done(&pg->procs);
	for (unsigned l = 0; l < pg->nlanes; l++) {
		free(pg->lanes[l].s);
		free(pg->lanes[l].in);
		free(pg->lanes[l].exe);
	}
	for (unsigned g = 0; g < G__MAX; g++)
		for (unsigned k = 0; k < pg->g[g].n; k++)
			json_object_put(pg->g[g].s[k].v);
	json_object_put(pg->markers);
	json_object_put(pg->wakes);
	json_object_put(pg->gaps);
	json_object_put(pg->mt);
	fr_folded_free(pg->cpu);
	fr_folded_free(pg->offcpu);
	free(pg->cpu_last);
	free(pg->recs);
}

int report_html(struct report *rp, const struct frctl_source *s, const struct frctl_window_args *a,
		const struct baseline *bl, struct json_object *changes, FILE *out)
{
	struct page pg = {
		.w = s->w, .a = a, .bl = bl,
		.markers = json_object_new_array(), .gaps = json_object_new_array(), .wakes = json_object_new_array(), .mt = json_object_new_array(),
		.cpu = fr_folded_new(), .offcpu = fr_folded_new(),
		.g = {
			[G_CPU] = { .name = "CPU busy", .unit = "%" },
			[G_MEM] = { .name = "Memory available", .unit = "MiB" },
			[G_PSI] = { .name = "Pressure (some, avg10)", .unit = "%" },
			[G_LOAD] = { .name = "Load", .unit = "" },
			[G_DISK] = { .name = "Disk latency", .unit = "ms" },
		},
	};
	struct json_object *data;
	int r = 0;

	if (!pg.markers || !pg.gaps || !pg.mt || !pg.cpu || !pg.offcpu) {
		page_done(&pg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->w->n; i++) {
		struct fr_window_entry e;
		if (frctl_window_entry(a, s->w, i, &e))
			survey(&pg, &e);
	}
	if (choose_lanes(&pg) < 0) {
		page_done(&pg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->w->n; i++) {
		struct fr_window_entry e;
		if (frctl_window_entry(a, s->w, i, &e))
			collect(&pg, i, &e);
	}
	data = data_json(&pg);
	fputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>", out);
	if (frctl_meta_string(s->meta, "id")) {
		fputs("flightrec incident ", out);
		put_html(out, frctl_meta_string(s->meta, "id"));
	} else
		fputs("flightrec report", out);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", fr_report_html_css);
	put_header(out, s, rp, &pg);
	put_crashes(out, s->w, rp);
	put_changes(out, bl, changes);
	fputs("<section id=\"timeline\"><h2>Timeline</h2><div class=\"view\"></div><noscript><p>The timeline, flame "
	      "graphs and charts need JavaScript; the tables below do not.</p></noscript></section>\n"
	      "<section id=\"flame-cpu\"><h2>CPU flame graph</h2><div class=\"view\"></div></section>\n",
	      out);
	if (bl->active && side_usable(&bl->base, &bl->now))
		fputs("<section id=\"flame-diff\"><h2>CPU flame graph against the baseline</h2><div class=\"view\"></div>"
		      "</section>\n",
		      out);
	fputs(
	      "<section id=\"flame-offcpu\"><h2>Off-CPU flame graph</h2><div class=\"view\"></div></section>\n"
	      "<section id=\"metrics\"><h2>Metrics</h2><div class=\"view\"></div></section>\n",
	      out);
	put_tables(out, s->w, rp);
	fputs("<script type=\"application/json\" id=\"fr-data\">", out);
	put_json_in_html(out, data);
	fprintf(out, "</script>\n<script>\n%s</script>\n</body></html>\n", fr_report_html_js);
	json_object_put(data);
	page_done(&pg);
	return r;
}
