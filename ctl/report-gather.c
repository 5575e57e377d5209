/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl report's one pass over the window: each record shown is added to
 * what the report prints (struct report, report.h).
 */
#include <json-c/json.h>
#include <string.h>

#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/wait-kind.h"
#include "report.h"

static void top_add(struct top *t, const struct fr_window_entry *e, uint64_t v)
{
	unsigned i;

	t->count++;
	if (t->n == TOP && v <= t->v[TOP - 1])
		return;
	i = t->n < TOP ? t->n++ : TOP - 1;
	for (; i > 0 && t->v[i - 1] < v; i--) {
		t->v[i] = t->v[i - 1];
		t->e[i] = t->e[i - 1];
	}
	t->v[i] = v;
	t->e[i] = *e;
}

static void extreme_max(struct extreme *x, double v, uint64_t wall)
{
	if (!x->seen || v > x->v)
		*x = (struct extreme){ true, v, wall };
}

static void extreme_min(struct extreme *x, double v, uint64_t wall)
{
	if (!x->seen || v < x->v)
		*x = (struct extreme){ true, v, wall };
}

/* Returns the index @e took, or -1 when the list is full. */
static int list_add(struct list *l, const struct fr_window_entry *e)
{
	if (l->n == LIST_MAX) {
		l->more++;
		return -1;
	}
	l->v[l->n] = *e;
	return (int)l->n++;
}

static void metrics(struct report *rp, const struct fr_window_entry *e)
{
	struct json_object *m = fr_record_metrics(&e->r), *v, *x;

	if (!m)
		return;
	if (json_object_object_get_ex(m, "load", &v) && json_object_array_length(v) > 0)
		extreme_max(&rp->load, json_object_get_double(json_object_array_get_idx(v, 0)), e->wall_ns);
	if (json_object_object_get_ex(m, "memory", &v) && json_object_object_get_ex(v, "available_kb", &x))
		extreme_min(&rp->mem, (double)json_object_get_int64(x), e->wall_ns);
	if (json_object_object_get_ex(m, "cpus", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (json_object_object_get_ex(json_object_array_get_idx(v, i), "idle", &x))
				extreme_max(&rp->busy, 100.0 - json_object_get_double(x), e->wall_ns);
	if (json_object_object_get_ex(m, "pressure", &v)) {
		struct extreme *dst[] = { &rp->psi_cpu, &rp->psi_mem, &rp->psi_io };
		const char *res[] = { "cpu", "memory", "io" };
		for (unsigned i = 0; i < 3; i++) {
			struct json_object *r, *some, *avg;
			if (json_object_object_get_ex(v, res[i], &r) && json_object_object_get_ex(r, "some", &some) &&
			    json_object_object_get_ex(some, "avg10", &avg))
				extreme_max(dst[i], json_object_get_double(avg), e->wall_ns);
		}
	}
	json_object_put(m);
}

static void sample(struct report *rp, struct fr_window *w, size_t i, const struct fr_window_entry *e)
{
	struct fr_frame f[FRAMES_MAX];
	char name[512];
	uint64_t h;
	int n = fr_path_hash(w, e, f, name, sizeof(name), &h);

	rp->samples++;
	(void)fr_counts_add(&rp->procs, e->r.comm);
	fr_paths_add(&rp->cpu_paths, h, i, 1);
	/* where the CPU was: the innermost frame, named last */
	if (n > 0 && f[0].inlined)
		strncat(name, " (inlined)", sizeof(name) - strlen(name) - 1);
	(void)fr_counts_add(&rp->self, n > 0 ? name : "[no stack]");
}

/* A wait without frames is counted apart, not as a path of its process
 * alone (as a sample without is): the report says how much blocked time
 * it could not place. */
static void offcpu(struct report *rp, struct fr_window *w, size_t i, const struct fr_window_entry *e)
{
	struct fr_frame f[FRAMES_MAX];
	char name[512];
	uint64_t h, d = e->r.sched.duration_ns;

	/* a waker's wait may be idle by design (epoll_wait): all of them */
	fr_waits_add(&rp->waits, i, e);
	/* idle by design (lib/wait-kind.h): counted, not listed; what
	 * changed lists it when it changed */
	if (fr_wait_is_idle(&e->r, e->kernel_thread)) {
		rp->offcpu_idle++;
		rp->offcpu_idle_ns += d;
		return;
	}
	top_add(&rp->offcpu, e, d);
	rp->offcpu_ns += d;
	if (fr_path_hash(w, e, f, name, sizeof(name), &h) > 0)
		fr_paths_add(&rp->offcpu_paths, h, i, d);
	else {
		rp->offcpu_bare++;
		rp->offcpu_bare_ns += d;
	}
}

static uint64_t end_of(const struct fr_window_entry *e)
{
	return e->wall_ns + fr_record_duration_ns(&e->r);
}

/* The record a trigger fired on: the trigger carries its thread, and the
 * type and time of that record.  Triggers from before the daemon wrote
 * those (cause_type 0) are stamped when the rule fired, just after that
 * record completed: of the thread's records before it, the one that
 * completed last (a slow call is stamped at its start, its waits inside
 * it later), which may be a record of the thread since (an exit). */
static bool find_cause(const struct fr_window *w, size_t itrig, const struct fr_window_entry *trig,
		       struct fr_window_entry *best)
{
	bool found = false;

	for (size_t i = itrig; i-- > 0;) {
		const struct fr_window_item *it = &w->items[i];
		struct fr_window_entry e;

		if (trig->wall_ns - it->wall_ns > 3600 * NSEC_PER_SEC)
			break;
		if (it->pid != trig->r.pid || it->type == FR_REC_TRIGGER || fr_record_type_is_meta(it->type) ||
		    (trig->r.trigger.cause_type && it->type != trig->r.trigger.cause_type) ||
		    fr_window_get(w, i, &e) < 0 || e.r.tid != trig->r.tid)
			continue;
		if (trig->r.trigger.cause_type) {
			if (e.r.type != trig->r.trigger.cause_type ||
			    e.r.ts != trig->r.ts - (uint64_t)trig->r.trigger.cause_ago_ns)
				continue;
			*best = e;
			return true;
		}
		if (end_of(&e) > trig->wall_ns)
			continue;
		if (!found || end_of(&e) > end_of(best)) {
			*best = e;
			found = true;
		}
	}
	return found;
}

void report_add(struct report *rp, struct fr_window *w, size_t i, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;

	rp->records++;
	if (!rp->first)
		rp->first = e->wall_ns;
	rp->last = e->wall_ns;
	switch ((enum fr_record_type)r->type) {
	case FR_REC_SYSCALL: top_add(&rp->syscall, e, r->syscall.duration_ns); break;
	case FR_REC_OFFCPU: offcpu(rp, w, i, e); break;
	case FR_REC_RUNQ: top_add(&rp->runq, e, r->sched.duration_ns); break;
	case FR_REC_BLOCK: top_add(&rp->block, e, r->block.duration_ns); break;
	case FR_REC_SAMPLE: sample(rp, w, i, e); break;
	case FR_REC_METRICS: metrics(rp, e); break;
	case FR_REC_FORK: rp->forks++; break;
	case FR_REC_EXEC:
		rp->execs++;
		(void)fr_counts_add(&rp->started, r->comm);
		break;
	case FR_REC_EXIT:
		rp->exits++;
		if (r->exit.status)
			rp->exits_failed++;
		/* killed by a signal: wait status with a termination signal */
		if ((r->exit.status & 0x7f) && (r->exit.status & 0x7f) != 0x7f)
			(void)list_add(&rp->killed, e);
		break;
	case FR_REC_OOM:
		(void)list_add(&rp->ooms, e);
		break;
	case FR_REC_SIGNAL:
		(void)list_add(&rp->signals, e);
		break;
	case FR_REC_TRIGGER: {
		int k = list_add(&rp->triggers, e);
		if (k >= 0)
			rp->has_cause[k] = find_cause(w, i, e, &rp->causes[k]);
		break;
	}
	case FR_REC_MARK:
		(void)list_add(&rp->marks, e);
		break;
	case FR_REC_GAP:
		rp->gap_records++;
		rp->gaps_lost += r->gap.lost;
		break;
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	FR_REC_META_CASES
		break;
	}
}


void report_done(struct report *rp)
{
	fr_counts_done(&rp->procs);
	fr_counts_done(&rp->self);
	fr_counts_done(&rp->started);
	fr_paths_done(&rp->cpu_paths);
	fr_paths_done(&rp->offcpu_paths);
	fr_waits_done(&rp->waits);
}
