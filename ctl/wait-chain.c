/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Chains of waits (wait-chain.h). */
#include <stdlib.h>

#include "../lib/macro.h"
#include "wait-chain.h"

/* the waker's wait ends as it gets its CPU, and it wakes the other
 * after: clocks of two CPUs, converted, may put the end a little late */
#define SLACK_NS 1000000ULL

void fr_waits_add(struct fr_waits *x, size_t i, const struct fr_window_entry *e)
{
	if (x->failed)
		return;
	if (x->n == x->cap) {
		size_t cap = MAX(x->cap * 2, (size_t)1024);
		struct fr_wait_ref *v = realloc(x->v, cap * sizeof(*v));
		if (!v) {
			x->failed = true;
			return;
		}
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = (struct fr_wait_ref){ .tid = e->r.tid, .end = e->wall_ns + e->r.sched.duration_ns, .item = i };
	x->sorted = false;
}

void fr_waits_done(struct fr_waits *x)
{
	free(x->v);
	*x = (struct fr_waits){};
}

static int by_tid_end(const void *a, const void *b)
{
	const struct fr_wait_ref *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

bool fr_waits_waker_wait(struct fr_waits *x, struct fr_window *w, const struct fr_window_entry *e,
			 struct fr_window_entry *ret)
{
	const struct fr_record_waker *k = &e->r.sched.waker;
	uint64_t woke = e->wall_ns + k->delay_ns;
	size_t lo = 0, hi;

	if (x->failed || e->r.type != FR_REC_OFFCPU || !k->context)
		return false;
	if (!x->sorted) {
		qsort(x->v, x->n, sizeof(*x->v), by_tid_end);
		x->sorted = true;
	}
	/* the first of the waker's waits ending after the wakeup */
	hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fr_wait_ref *r = &x->v[mid];
		if (r->tid < k->tid || (r->tid == k->tid && r->end <= woke + SLACK_NS))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the one before it, if it is the waker's and ended within @e's wait */
	if (lo == 0 || x->v[lo - 1].tid != k->tid || x->v[lo - 1].end < e->wall_ns)
		return false;
	return fr_window_get(w, x->v[lo - 1].item, ret) == 0 && ret->r.type == FR_REC_OFFCPU;
}
