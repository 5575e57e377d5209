/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/syscall-names.h"
#include "../lib/wait-kind.h"
#include "output-folded.h"
#include "what-changed.h"

/* Waits are kept per key as a histogram: 4 buckets an octave of
 * nanoseconds (a p99 within 19 %), so that a side's memory is bounded by
 * its keys, not its records; keys past DIST_KEYS_MAX are one "[other]". */
#define DIST_BUCKETS 192
#define DIST_KEYS_MAX 4096
/* A count's change is listed when its rate moved this many standard
 * deviations (a Poisson rate test) and by this factor at least. */
#define Z_MIN 4.0
#define RATIO_MIN 1.5
/* Points a metric needs on each side to be compared. */
#define METRIC_POINTS_MIN 3

struct dist {
	char *key;
	uint64_t n, sum_ns;
	uint32_t h[DIST_BUCKETS];
};

static struct dist *dist_slot(struct dist *v, size_t cap, const char *key)
{
	for (size_t i = fr_str_hash(key) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!v[i].key || strcmp(v[i].key, key) == 0)
			return &v[i];
}

static struct dist *dist_find(const struct dist_map *m, const char *key)
{
	struct dist *d;

	if (!m->cap)
		return NULL;
	d = dist_slot(m->v, m->cap, key);
	return d->key ? d : NULL;
}

static struct dist *dist_get(struct dist_map *m, const char *key)
{
	struct dist *d;

	if ((m->used + 1) * 4 > m->cap * 3) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct dist *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].key)
				*dist_slot(v, cap, m->v[i].key) = m->v[i];
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	if (m->used >= DIST_KEYS_MAX && !dist_find(m, key))
		key = "[other]";
	d = dist_slot(m->v, m->cap, key);
	if (!d->key) {
		d->key = strdup(key);
		if (!d->key)
			return NULL;
		m->used++;
	}
	return d;
}

static unsigned bucket_of(uint64_t ns)
{
	double b = ns ? 4.0 * log2((double)ns) : 0;

	return b < 0 ? 0 : b >= DIST_BUCKETS ? DIST_BUCKETS - 1 : (unsigned)b;
}

/* The bucket's middle, in ns. */
static double bucket_ns(unsigned b)
{
	return exp2((b + 0.5) / 4.0);
}

static double dist_quantile(const struct dist *d, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)d->n), seen = 0;

	for (unsigned b = 0; b < DIST_BUCKETS; b++) {
		seen += d->h[b];
		if (seen >= MAX(want, (uint64_t)1))
			return bucket_ns(b);
	}
	return 0;
}

static void wait_add(struct side *s, const char *key, uint64_t ns)
{
	struct dist *d = dist_get(&s->waits, key);

	if (!d)
		return;
	d->n++;
	d->sum_ns += ns;
	d->h[bucket_of(ns)]++;
}

static struct side_series *series_get(struct side *s, const char *name, const char *unit, double scale)
{
	for (unsigned i = 0; i < s->nmetric; i++)
		if (strcmp(s->metric[i].name, name) == 0)
			return &s->metric[i];
	if (s->nmetric == SIDE_SERIES_MAX)
		return NULL;
	struct side_series *x = &s->metric[s->nmetric++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->unit = unit;
	x->scale = scale;
	return x;
}

static void series_add(struct side *s, const char *name, const char *unit, double scale, double v, uint64_t t)
{
	struct side_series *x = series_get(s, name, unit, scale);

	if (!x)
		return;
	if (x->n == x->cap) {
		size_t c = MAX(x->cap * 2, (size_t)64);
		double *nv = realloc(x->v, c * sizeof(*nv));
		if (!nv)
			return;
		x->v = nv;
		uint64_t *nt = realloc(x->t, c * sizeof(*nt));
		if (!nt)
			return;
		x->t = nt;
		x->cap = c;
	}
	x->v[x->n] = v;
	x->t[x->n++] = t;
}

/* The number at @path (keys, NULL-ended) in @o; *ok false when absent. */
static double jnum(struct json_object *o, const char *const *path, bool *ok)
{
	for (; *path; path++)
		if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, *path, &o)) {
			*ok = false;
			return 0;
		}
	*ok = json_object_is_type(o, json_type_double) || json_object_is_type(o, json_type_int);
	return *ok ? json_object_get_double(o) : 0;
}

static void metrics_add(struct side *s, const struct fr_window_entry *e)
{
	struct json_object *m = fr_record_metrics(&e->r), *v;
	static const char *res[] = { "cpu", "memory", "io" };
	char name[48];
	bool ok;
	double x;

	if (!m)
		return;
	x = jnum(m, (const char *const[]){ "memory", "available_kb", NULL }, &ok);
	if (ok)
		series_add(s, "memory available", "MiB", 1.0 / 1024, x, e->wall_ns);
	if (json_object_object_get_ex(m, "load", &v) && json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0)
		series_add(s, "load (1 min)", "", 1, json_object_get_double(json_object_array_get_idx(v, 0)), e->wall_ns);
	for (unsigned i = 0; i < ELEMENTSOF(res); i++) {
		x = jnum(m, (const char *const[]){ "pressure", res[i], "some", "avg10", NULL }, &ok);
		snprintf(name, sizeof(name), "%s pressure (some, avg10)", res[i]);
		if (ok)
			series_add(s, name, "%", 1, x, e->wall_ns);
	}
	if (json_object_object_get_ex(m, "disk_latency", &v) && json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, dev, d) {
			x = jnum(d, (const char *const[]){ "p99_us", NULL }, &ok);
			snprintf(name, sizeof(name), "disk %.20s latency p99", dev);
			if (ok)
				series_add(s, name, "ms", 1.0 / 1000, x, e->wall_ns);
		}
	}
	json_object_put(m);
}

int side_init(struct side *s, uint64_t since, uint64_t until, bool stacks)
{
	*s = (struct side){ .since = since, .until = until, .cpu = stacks ? fr_folded_new() : NULL };
	return !stacks || s->cpu ? 0 : -ENOMEM;
}

void side_add(struct side *s, struct fr_window *w, size_t i, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
	char key[512], name[256], b[64];
	const char *call;
	int n;

	(void)i;
	s->records++;
	if (!s->first)
		s->first = e->wall_ns;
	s->last = e->wall_ns;
	if (r->pid && !fr_record_type_is_meta(r->type))
		(void)fr_counts_add(&s->seen, r->comm);
	switch ((enum fr_record_type)r->type) {
	case FR_REC_SAMPLE:
		s->samples++;
		(void)fr_counts_add(&s->procs, r->comm);
		/* where the CPU was: the innermost frame, as the report names it */
		n = fr_window_frames(w, e, f, FR_FRAMES_EXPANDED_MAX);
		if (n > 0) {
			fr_frame_name(&f[0], false, name, sizeof(name));
			if (f[0].inlined)
				strncat(name, " (inlined)", sizeof(name) - strlen(name) - 1);
		}
		(void)fr_counts_add(&s->funcs, n > 0 ? name : "[no stack]");
		if (s->cpu)
			(void)fr_folded_add(s->cpu, w, e, 1);
		break;
	case FR_REC_OFFCPU:
		/* only latencies: an idle wait (a kernel thread's idle loop, an
		 * event loop's epoll_wait, a sleep) gets longer or shorter with
		 * any change of load, and listed it was the noise of every
		 * comparison (kworkers and ksoftirqds, 8 lines of 21) */
		if (fr_wait_is_idle(r, e->kernel_thread))
			break;
		call = r->sched.syscall_nr >= 0 ? fr_syscall_name((unsigned)r->sched.syscall_nr) : NULL;
		snprintf(key, sizeof(key), "off-CPU%s\t%s\t%s", e->kernel_thread ? " (kernel thread)" : "", r->comm,
			 call ? call : "");
		wait_add(s, key, r->sched.duration_ns);
		break;
	case FR_REC_RUNQ:
		snprintf(key, sizeof(key), "run queue\t%s\t", r->comm);
		wait_add(s, key, r->sched.duration_ns);
		break;
	case FR_REC_BLOCK:
		snprintf(key, sizeof(key), "block I/O\t%s\t%s", fr_format_dev(r->block.dev, b, sizeof(b)),
			 fr_block_op_name(r->block.op));
		wait_add(s, key, r->block.duration_ns);
		break;
	case FR_REC_SYSCALL:
		call = fr_syscall_name(r->syscall.nr);
		snprintf(key, sizeof(key), "syscall\t%s\t%s", r->comm, call ? call : "?");
		wait_add(s, key, r->syscall.duration_ns);
		break;
	case FR_REC_EXEC: (void)fr_counts_add(&s->started, r->comm); break;
	case FR_REC_EXIT: (void)fr_counts_add(&s->exited, r->comm); break;
	case FR_REC_SIGNAL:
		snprintf(key, sizeof(key), "%s %s", r->comm, fr_signal_name((int)r->signal.sig, b, sizeof(b)));
		(void)fr_counts_add(&s->crashed, key);
		break;
	case FR_REC_OOM: (void)fr_counts_add(&s->ooms, r->comm); break;
	case FR_REC_TCP:
		snprintf(key, sizeof(key), "TCP %s, peer %s", fr_tcp_event_name(r->tcp.event),
			 fr_format_tcp_addr(r, r->tcp.daddr, name, sizeof(name)));
		(void)fr_counts_add(&s->events, key);
		break;
	case FR_REC_MARK:
		snprintf(key, sizeof(key), "mark \"%.*s\"", (int)MIN(r->mark.text_len, 200u), r->mark.text);
		(void)fr_counts_add(&s->events, key);
		break;
	case FR_REC_METRICS: metrics_add(s, e); break;
	case FR_REC_FORK:
	case FR_REC_SWITCH:
	case FR_REC_GAP:
	case FR_REC_TRIGGER:
	FR_REC_META_CASES
		break;
	}
}

void side_done(struct side *s)
{
	fr_counts_done(&s->seen);
	fr_counts_done(&s->procs);
	fr_counts_done(&s->funcs);
	fr_counts_done(&s->started);
	fr_counts_done(&s->exited);
	fr_counts_done(&s->crashed);
	fr_counts_done(&s->ooms);
	fr_counts_done(&s->events);
	for (size_t i = 0; i < s->waits.cap; i++)
		free(s->waits.v[i].key);
	free(s->waits.v);
	for (unsigned i = 0; i < s->nmetric; i++) {
		free(s->metric[i].v);
		free(s->metric[i].t);
	}
	s->cpu = fr_folded_free(s->cpu);
}

/* --- the comparison --- */

/* A baseline needs this many records */
#define BASE_RECORDS_MIN 10

/* The span a side's rates are over: what its records cover of it. */
static double span_s(const struct side *s)
{
	uint64_t since = MAX(s->since, s->first);

	return s->until > since ? (double)(s->until - since) / 1e9 : 1.0;
}

double side_span_s(const struct side *s)
{
	return span_s(s);
}

bool side_usable(const struct side *base, const struct side *now)
{
	return base->records >= BASE_RECORDS_MIN && span_s(base) * 10 >= span_s(now);
}

static uint64_t count_of(const struct fr_counts *c, const char *key)
{
	for (size_t i = 0; i < c->cap; i++)
		if (c->v[i].key && strcmp(c->v[i].key, key) == 0)
			return c->v[i].n;
	return 0;
}

/* How many standard deviations @b (counted over @tb seconds) is from what
 * @a (over @ta) predicts, if both were one Poisson rate: given the sum,
 * @b is binomial with the now side's share of the time. */
static double rate_z(uint64_t a, double ta, uint64_t b, double tb)
{
	double n = (double)(a + b), q = tb / (ta + tb), sd = sqrt(n * q * (1 - q));

	return n == 0 || sd == 0 ? 0 : ((double)b - n * q) / sd;
}

static double ratio_of(uint64_t a, double ta, uint64_t b, double tb)
{
	if (!a)
		return b ? INFINITY : 1;
	return ((double)b / tb) / ((double)a / ta);
}

struct changes {
	struct json_object **v;
	double *score;
	size_t n, cap;
};

static struct json_object *change_new(struct changes *c, double score, const char *kind, const char *subject,
				      const char *direction)
{
	struct json_object *o = json_object_new_object();

	if (c->n == c->cap) {
		size_t cap = MAX(c->cap * 2, (size_t)32);
		struct json_object **v = realloc(c->v, cap * sizeof(*v));
		double *s = v ? realloc(c->score, cap * sizeof(*s)) : NULL;
		if (v)
			c->v = v;
		if (!v || !s) {
			json_object_put(o);
			return NULL;
		}
		c->score = s;
		c->cap = cap;
	}
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "subject", json_object_new_string(subject));
	json_object_object_add(o, "direction", json_object_new_string(direction));
	json_object_object_add(o, "score", json_object_new_double(round(score * 10) / 10));
	c->v[c->n] = o;
	c->score[c->n++] = score;
	return o;
}

static void set_text(struct json_object *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_text(struct json_object *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "text", json_object_new_string(line));
}

static struct json_object *count_json(uint64_t n, double t, uint64_t total)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "per_s", json_object_new_double(round((double)n / t * 1000) / 1000));
	if (total)
		json_object_object_add(o, "share", json_object_new_double(round((double)n / (double)total * 10000) / 10000));
	return o;
}

static const char *arrow(double z)
{
	return z > 0 ? "up" : "down";
}

/* CPU samples by process or function: the rate test and the ratio. */
static void compare_cpu(struct changes *c, const struct side *now, const struct side *base, bool by_process)
{
	const struct fr_counts *cn = by_process ? &now->procs : &now->funcs, *cb = by_process ? &base->procs : &base->funcs;
	const char *kind = by_process ? "cpu_process" : "cpu_function";
	double tn = span_s(now), tb = span_s(base);

	for (int pass = 0; pass < 2; pass++) {
		const struct fr_counts *x = pass ? cb : cn;
		for (size_t i = 0; i < x->cap; i++) {
			const char *key = x->v[i].key;
			if (!key || (pass && count_of(cn, key)))
				continue; /* the second pass: those the window lacks */
			uint64_t b = pass ? 0 : x->v[i].n, a = pass ? x->v[i].n : count_of(cb, key);
			double z = rate_z(a, tb, b, tn), r = ratio_of(a, tb, b, tn);
			/* a process new or gone is said as such */
			if (by_process && (!count_of(&base->seen, key) || !count_of(&now->seen, key)))
				continue;
			if (fabs(z) < Z_MIN || (r < RATIO_MIN && r > 1 / RATIO_MIN))
				continue;
			struct json_object *o = change_new(c, fabs(z), kind, key, arrow(z));
			if (!o)
				return;
			json_object_object_add(o, "before", count_json(a, tb, base->samples));
			json_object_object_add(o, "now", count_json(b, tn, now->samples));
			json_object_object_add(o, "z", json_object_new_double(round(z * 10) / 10));
			set_text(o, "CPU %s %-5s %s: %.1f%% -> %.1f%% of samples (%" PRIu64 " -> %" PRIu64 ", %.1f/s -> %.1f/s)",
				 by_process ? "process " : "function", z > 0 ? "up" : "down", key,
				 base->samples ? 100.0 * (double)a / (double)base->samples : 0.0,
				 now->samples ? 100.0 * (double)b / (double)now->samples : 0.0, a, b, (double)a / tb, (double)b / tn);
		}
	}
}

static void compare_processes(struct changes *c, const struct side *now, const struct side *base)
{
	for (size_t i = 0; i < now->seen.cap; i++) {
		const char *k = now->seen.v[i].key;
		if (!k)
			continue;
		uint64_t samples = count_of(&now->procs, k), recs = now->seen.v[i].n;
		struct json_object *o;
		if (!*k)
			continue;
		if (!count_of(&base->seen, k)) {
			/* the busy ones first: a command run once is a fact, not news */
			o = change_new(c, 2 + log2(1.0 + (double)samples) + log2(1.0 + (double)recs) / 4, "process", k, "new");
			if (!o)
				return;
			json_object_object_add(o, "now", count_json(samples, span_s(now), now->samples));
			set_text(o, "new process      %s: %" PRIu64 " records, %" PRIu64 " CPU samples", k, recs, samples);
		} else if (count_of(&now->exited, k) && count_of(&now->started, k) &&
			   !(count_of(&base->exited, k) && count_of(&base->started, k))) {
			/* (a command that restarts in the baseline too, a shell
			 * loop's sleep, a cron job's, is how the machine runs) */
			o = change_new(c, 6, "process", k, "restarted");
			if (!o)
				return;
			set_text(o, "restarted        %s: %" PRIu64 " exits, %" PRIu64 " execs", k, count_of(&now->exited, k),
				 count_of(&now->started, k));
		}
	}
	for (size_t i = 0; i < base->seen.cap; i++) {
		const char *k = base->seen.v[i].key;
		uint64_t samples;
		if (!k || count_of(&now->seen, k) || (samples = count_of(&base->procs, k)) < 5)
			continue;
		struct json_object *o = change_new(c, 3 + log2(1.0 + (double)samples), "process", k, "gone");
		if (!o)
			return;
		json_object_object_add(o, "before", count_json(samples, span_s(base), base->samples));
		set_text(o, "process gone     %s: had %" PRIu64 " CPU samples before", k, samples);
	}
}

/* Counted events: crashes, OOM kills, TCP trouble, marks. */
static void compare_events(struct changes *c, const struct side *now, const struct side *base,
			   const struct fr_counts *cn, const struct fr_counts *cb, const char *kind, const char *label,
			   double weight)
{
	double tn = span_s(now), tb = span_s(base);

	for (size_t i = 0; i < cn->cap; i++) {
		const char *k = cn->v[i].key;
		if (!k)
			continue;
		uint64_t b = cn->v[i].n, a = count_of(cb, k);
		double z = rate_z(a, tb, b, tn);
		if (a && (z < Z_MIN || ratio_of(a, tb, b, tn) < 2))
			continue;
		struct json_object *o = change_new(c, weight + (a ? z : log2(1.0 + (double)b)), kind, k, a ? "up" : "new");
		if (!o)
			return;
		json_object_object_add(o, "before", count_json(a, tb, 0));
		json_object_object_add(o, "now", count_json(b, tn, 0));
		set_text(o, "%-16s %s: %" PRIu64 " (before: %" PRIu64 ")", label, k, b, a);
	}
}

static struct json_object *dist_json(const struct dist *d, double t)
{
	struct json_object *o = count_json(d ? d->n : 0, t, 0);

	if (d && d->n) {
		json_object_object_add(o, "p50_us", json_object_new_double(round(dist_quantile(d, 0.5) / 100) / 10));
		json_object_object_add(o, "p99_us", json_object_new_double(round(dist_quantile(d, 0.99) / 100) / 10));
		json_object_object_add(o, "total_us", json_object_new_int64((int64_t)(d->sum_ns / 1000)));
	}
	return o;
}

static void compare_waits(struct changes *c, const struct side *now, const struct side *base)
{
	double tn = span_s(now), tb = span_s(base);
	char p50a[32], p50b[32], p99a[32], p99b[32];

	for (size_t i = 0; i < now->waits.cap; i++) {
		const struct dist *dn = &now->waits.v[i], *db;
		if (!dn->key)
			continue;
		/* the key is "kind\tcomm\tcall": a new process's waits are new
		 * with it, said once by its line */
		char what[512];
		snprintf(what, sizeof(what), "%s", dn->key);
		char *t1 = strchr(what, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (t1 && t2) {
			*t2 = 0;
			if (count_of(&now->seen, t1 + 1) && !count_of(&base->seen, t1 + 1))
				continue;
			*t2 = t2[1] ? ' ' : 0;
			*t1 = ' ';
		}
		db = dist_find(&base->waits, dn->key);
		uint64_t a = db ? db->n : 0, b = dn->n;
		double z = rate_z(a, tb, b, tn), r = ratio_of(a, tb, b, tn), score = 0;
		double q99 = a ? dist_quantile(dn, 0.99) / dist_quantile(db, 0.99) : 1;
		const char *dir = NULL;

		if (fabs(z) >= Z_MIN && (r >= RATIO_MIN || r <= 1 / RATIO_MIN) && MAX(a, b) >= 5) {
			score = fabs(z);
			dir = z > 0 ? "more" : "fewer";
		}
		if (a >= 5 && b >= 5 && (q99 >= 2 || q99 <= 0.5) &&
		    3 * fabs(log2(q99)) * MIN(1.0, sqrt((double)MIN(a, b)) / 3) > score) {
			score = 3 * fabs(log2(q99)) * MIN(1.0, sqrt((double)MIN(a, b)) / 3);
			dir = q99 >= 2 ? "longer" : "shorter";
		}
		if (dir && !a)
			dir = "new";
		if (!dir)
			continue;
		if (strstr(dn->key, "(kernel thread)"))
			score /= 2;
		struct json_object *o = change_new(c, score, "wait", what, dir);
		if (!o)
			return;
		json_object_object_add(o, "before", dist_json(db, tb));
		json_object_object_add(o, "now", dist_json(dn, tn));
		fr_format_duration(a ? (uint64_t)dist_quantile(db, 0.5) : 0, p50a, sizeof(p50a));
		fr_format_duration((uint64_t)dist_quantile(dn, 0.5), p50b, sizeof(p50b));
		fr_format_duration(a ? (uint64_t)dist_quantile(db, 0.99) : 0, p99a, sizeof(p99a));
		fr_format_duration((uint64_t)dist_quantile(dn, 0.99), p99b, sizeof(p99b));
		set_text(o, "waits %-10s %s: %" PRIu64 " -> %" PRIu64 " (%.1f/s -> %.1f/s), p50 %s -> %s, p99 %s -> %s", dir,
			 what, a, b, (double)a / tb, (double)b / tn, a ? p50a : "-", p50b, a ? p99a : "-", p99b);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, size_t n, double *tmp)
{
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* The least change of each metric worth a line, in its own units:
 * smaller ones are the noise of a healthy machine. */
static double metric_floor(const struct side_series *x)
{
	if (strstr(x->name, "memory available"))
		return 64 * 1024; /* kB */
	if (strstr(x->name, "load"))
		return 0.5;
	if (strstr(x->name, "pressure"))
		return 2;
	return 1000; /* disk latency, µs */
}

static void compare_metrics(struct changes *c, const struct side *now, const struct side *base)
{
	for (unsigned i = 0; i < now->nmetric; i++) {
		const struct side_series *xn = &now->metric[i], *xb = NULL;
		for (unsigned j = 0; j < base->nmetric; j++)
			if (strcmp(base->metric[j].name, xn->name) == 0)
				xb = &base->metric[j];
		if (!xb || xn->n < METRIC_POINTS_MIN || xb->n < METRIC_POINTS_MIN)
			continue;
		double *tmp = malloc(MAX(xn->n, xb->n) * sizeof(*tmp)), mb, mn, mad, spread, z;
		if (!tmp)
			return;
		mb = median(xb->v, xb->n, tmp);
		mn = median(xn->v, xn->n, tmp);
		for (size_t k = 0; k < xb->n; k++)
			tmp[k] = fabs(xb->v[k] - mb);
		mad = median(tmp, xb->n, tmp) * 1.4826;
		free(tmp);
		spread = MAX(mad, metric_floor(xn) / 4);
		z = (mn - mb) / spread;
		if (fabs(z) < Z_MIN || fabs(mn - mb) < metric_floor(xn))
			continue;
		/* when: the first point of the window past half the step */
		uint64_t at = xn->t[0];
		for (size_t k = 0; k < xn->n; k++)
			if ((mn > mb && xn->v[k] >= (mb + mn) / 2) || (mn < mb && xn->v[k] <= (mb + mn) / 2)) {
				at = xn->t[k];
				break;
			}
		struct json_object *o = change_new(c, MIN(fabs(z), 30.0), "metric", xn->name, arrow(z)), *v;
		char when[64];
		if (!o)
			return;
		v = json_object_new_object();
		json_object_object_add(v, "median", json_object_new_double(round(mb * xn->scale * 100) / 100));
		json_object_object_add(o, "before", v);
		v = json_object_new_object();
		json_object_object_add(v, "median", json_object_new_double(round(mn * xn->scale * 100) / 100));
		json_object_object_add(o, "now", v);
		json_object_object_add(o, "unit", json_object_new_string(xn->unit));
		json_object_object_add(o, "at", json_object_new_string(fr_format_rfc3339(at, when, sizeof(when))));
		set_text(o, "metric %-9s %s: %.2f -> %.2f %s (medians), stepped at %s", z > 0 ? "up" : "down", xn->name,
			 mb * xn->scale, mn * xn->scale, xn->unit, when);
	}
}

struct json_object *what_changed(struct side *now, struct side *base)
{
	struct changes c = {};
	struct json_object *a = json_object_new_array();
	size_t *order;

	if (!a || !side_usable(base, now))
		return a;
	compare_events(&c, now, base, &now->crashed, &base->crashed, "crash", "fatal signal", 100);
	compare_events(&c, now, base, &now->ooms, &base->ooms, "oom_kill", "OOM kill", 100);
	compare_processes(&c, now, base);
	compare_cpu(&c, now, base, true);
	compare_cpu(&c, now, base, false);
	compare_waits(&c, now, base);
	compare_metrics(&c, now, base);
	compare_events(&c, now, base, &now->events, &base->events, "event", "event", 0);
	order = malloc(MAX(c.n, (size_t)1) * sizeof(*order));
	if (order) {
		/* by score, the highest first (insertion: a few hundred at most) */
		for (size_t i = 0; i < c.n; i++) {
			size_t j = i;
			for (; j > 0 && c.score[order[j - 1]] < c.score[i]; j--)
				order[j] = order[j - 1];
			order[j] = i;
		}
		for (size_t i = 0; i < c.n; i++)
			json_object_array_add(a, c.v[order[i]]);
	} else {
		for (size_t i = 0; i < c.n; i++)
			json_object_put(c.v[i]);
		json_object_put(a);
		a = NULL;
	}
	free(order);
	free(c.v);
	free(c.score);
	return a;
}

struct json_object *side_span_json(const struct side *s)
{
	struct json_object *o = json_object_new_object();
	char t[64];

	json_object_object_add(o, "since", json_object_new_string(fr_format_rfc3339(s->since, t, sizeof(t))));
	json_object_object_add(o, "until", json_object_new_string(fr_format_rfc3339(s->until, t, sizeof(t))));
	json_object_object_add(o, "records", json_object_new_int64((int64_t)s->records));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)s->samples));
	return o;
}

void what_changed_print(struct json_object *changes, const struct side *now, const struct side *base, unsigned max)
{
	size_t n = changes ? json_object_array_length(changes) : 0;
	char a[64], b[64], d[32];

	fr_format_rfc3339(base->since, a, sizeof(a));
	fr_format_duration(base->until - base->since, d, sizeof(d));
	if (!side_usable(base, now)) {
		printf("What changed: no baseline (%" PRIu64 " records in the %s from %s)\n", base->records, d, a);
		return;
	}
	fr_format_rfc3339(base->until, b, sizeof(b));
	printf("What changed, against %s to %s (%s, %" PRIu64 " records)%s\n", a, b, d, base->records,
	       n ? ", most unusual first:" : ": nothing beyond the noise");
	for (size_t i = 0; i < n && i < max; i++) {
		struct json_object *t;
		if (json_object_object_get_ex(json_object_array_get_idx(changes, i), "text", &t))
			printf("  %s\n", json_object_get_string(t));
	}
	if (n > max)
		printf("  and %zu more (--format json lists them all)\n", n - max);
}
