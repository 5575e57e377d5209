/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wakers of long waits, joined to their records (wakers.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/event.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "wakers.h"

struct held_waker {
	uint64_t read_at; /* CLOCK_MONOTONIC */
	size_t size;
	struct fr_event_waker e; /* and its user stack copy */
};

struct held_record {
	unsigned cpu;
	unsigned drains; /* ends of drains seen since it was held */
	size_t size;
	uint8_t data[];
};

struct fr_wakers {
	struct fr_pid_map by_tid; /* wakee tid -> struct held_waker */
	struct held_record **records;
	size_t nrecords;
	struct fr_wakers_stats st;
};

int fr_wakers_new(struct fr_wakers **ret)
{
	struct fr_wakers *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->records = calloc(FR_WAKERS_MAX, sizeof(*w->records));
	if (!w->records) {
		free(w);
		return -ENOMEM;
	}
	*ret = w;
	return 0;
}

struct fr_wakers *fr_wakers_free(struct fr_wakers *w)
{
	struct held_waker *h;
	size_t i = 0;

	if (!w)
		return NULL;
	while ((h = fr_pid_map_next(&w->by_tid, &i, NULL)))
		free(h);
	fr_pid_map_done(&w->by_tid);
	for (size_t k = 0; k < w->nrecords; k++)
		free(w->records[k]);
	free(w->records);
	free(w);
	return NULL;
}

void fr_wakers_add(struct fr_wakers *w, const struct fr_event_waker *e, size_t size, uint64_t now)
{
	struct held_waker *h;
	void *old = NULL;

	w->st.events++;
	/* (its stack copy and Python frames at most: event.h) */
	if (size < sizeof(*e) || size > sizeof(*e) + FR_USTACK_COPY + sizeof(struct fr_py_stack)) {
		w->st.refused++;
		return;
	}
	/* a thread waits once at a time: one held for it is an older wait's
	 * whose record was dropped, replaced */
	if (w->by_tid.n >= FR_WAKERS_MAX && !fr_pid_map_get(&w->by_tid, e->wakee_tid)) {
		w->st.refused++;
		return;
	}
	h = malloc(offsetof(struct held_waker, e) + size);
	if (!h) {
		w->st.refused++;
		return;
	}
	h->read_at = now;
	h->size = size;
	memcpy(&h->e, e, size);
	if (fr_pid_map_put(&w->by_tid, e->wakee_tid, h, &old) < 0) {
		free(h);
		w->st.refused++;
		return;
	}
	if (old) {
		free(old);
		w->st.orphaned++;
	}
}

struct fr_event_waker *fr_wakers_take(struct fr_wakers *w, uint32_t tid, uint64_t start, size_t *size)
{
	struct held_waker *h = fr_pid_map_get(&w->by_tid, tid);
	struct fr_event_waker *e;

	if (!h || h->e.wait_start != start)
		return NULL;
	fr_pid_map_remove(&w->by_tid, tid);
	/* the event to the front of its block: one allocation handed over */
	*size = h->size;
	e = (struct fr_event_waker *)(void *)h;
	memmove(e, &h->e, *size);
	w->st.joined++;
	return e;
}

bool fr_wakers_defer(struct fr_wakers *w, unsigned cpu, const void *data, size_t size)
{
	struct held_record *r;

	if (w->nrecords >= FR_WAKERS_MAX ||
	    size > sizeof(struct fr_event_offcpu) + FR_USTACK_COPY + sizeof(struct fr_py_stack)) {
		w->st.refused++;
		return false;
	}
	r = malloc(sizeof(*r) + size);
	if (!r) {
		w->st.refused++;
		return false;
	}
	r->cpu = cpu;
	r->drains = 0;
	r->size = size;
	memcpy(r->data, data, size);
	w->records[w->nrecords++] = r;
	w->st.deferred++;
	return true;
}

void fr_wakers_release(struct fr_wakers *w, uint64_t now, bool all,
		       void (*fn)(void *userdata, unsigned cpu, const void *data, size_t size), void *userdata)
{
	size_t kept = 0, i = 0;
	struct held_waker *h;
	uint32_t tid;

	for (size_t k = 0; k < w->nrecords; k++) {
		struct held_record *r = w->records[k];
		const struct fr_event_offcpu *e = (const void *)r->data;
		struct held_waker *hw = fr_pid_map_get(&w->by_tid, e->hdr.tid);
		bool found = hw && hw->e.wait_start == e->hdr.ts;

		/* held at the end of the drain that read it: one more */
		if (!found && !all && r->drains++ < 1) {
			w->records[kept++] = r;
			continue;
		}
		if (!found)
			w->st.missing++;
		fn(userdata, r->cpu, r->data, r->size);
		free(r);
	}
	w->nrecords = kept;
	while ((h = fr_pid_map_next(&w->by_tid, &i, &tid)))
		if (all || now - h->read_at > FR_WAKERS_KEEP_NS) {
			free(fr_pid_map_remove(&w->by_tid, tid));
			w->st.orphaned++;
			i = 0; /* removing moves entries: from the start */
		}
}

void fr_wakers_get_stats(const struct fr_wakers *w, struct fr_wakers_stats *ret)
{
	*ret = w->st;
	ret->held = w->by_tid.n + w->nrecords;
}
