/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The window in slices of time (fr_window_stream_next()).  Chunks are
 * loaded in order of their first record; once those up to some chunk are
 * loaded, every record before that chunk's first one is known, and those
 * records are the next slice, merged across the loaded chunks into time
 * order (ties in store order).  A chunk whose records are all handed out
 * is dropped, its buffers reused, unless the window is kept whole; so
 * printing a window touches a few megabytes however long it is (a whole
 * window of millions of records costs its decoded payloads in fresh
 * memory: on a VM, faulting that in took as long as decompressing it).
 */
#include <errno.h>
#include <stdlib.h>

#include "big-alloc.h"
#include "window-internal.h"
#include "window-sort.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Waits for the oldest slice's worth of chunks, helping with them; their
 * records join the open chunks'. */
static int merge_loaded(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t end = s->batch_end[0];
	int k = 0;

	window_workers_wait(w, end);
	for (size_t i = s->merged; i < end; i++) {
		const struct window_job *job = &s->jobs[i];
		struct window_stream_chunk *c = &s->sc[job->idx];

		s->open[s->nopen++] = job->idx;
		if (job->k == -EBADMSG) {
			w->chunks_damaged++;
			c->damaged = true;
			continue; /* no items: dropped with the drained */
		}
		if (job->k < 0 && k == 0)
			k = job->k;
		w->records_bad += job->bad;
		w->records_unknown += job->unknown;
		c->items = job->items;
		c->n = job->n;
	}
	s->merged = end;
	s->batch_end[0] = s->batch_end[1];
	s->nbatches--;
	if (s->q.progress)
		s->q.progress(s->merged, w->ncd, s->q.userdata);
	/* ties in time go in store order */
	qsort(s->open, s->nopen, sizeof(*s->open), cmp_u32);
	return k;
}

int fr_window_stream_next(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t need = 0, kept = 0;
	uint64_t until;
	int k;

	if (!s)
		return -EINVAL;
	/* the first slice: the loaders start on two slices' worth */
	if (!s->started) {
		if ((k = window_workers_start(w)) < 0)
			return k;
		for (int b = 0; b < 2 && s->next < w->ncd; b++)
			window_workers_schedule(w);
	}
	if (s->nbatches && (k = merge_loaded(w)) < 0)
		return k;
	/* what the last slice handed out is done with */
	for (size_t i = 0; i < s->nopen; i++) {
		if (s->sc[s->open[i]].n == 0)
			window_workers_drop(w, s->open[i]);
		else
			s->open[kept++] = s->open[i];
	}
	s->nopen = kept;
	w->n = 0;
	if (s->merged == w->ncd && s->nopen == 0)
		return 0;
	/* no chunk not merged yet has a record before its first one */
	until = s->merged < w->ncd ? window_ref_first(&s->refs[s->order[s->merged]]) : UINT64_MAX;
	for (size_t i = 0; i < s->nopen; i++)
		need += s->sc[s->open[i]].n;
	if (need > w->cap) {
		/* room to spare: the next slices are much the same size */
		size_t cap = need + need / 2;
		struct fr_window_item *items = fr_big_alloc(cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		fr_big_free(w->items, w->cap * sizeof(*w->items));
		fr_big_free(s->scratch, w->cap * sizeof(*s->scratch));
		s->scratch = NULL;
		w->items = items;
		w->cap = cap;
	}
	for (size_t i = 0; i < s->nopen; i++) {
		struct window_stream_chunk *c = &s->sc[s->open[i]];
		size_t left = 0;

		for (size_t j = 0; j < c->n; j++) {
			if (c->items[j].wall_ns < until || until == UINT64_MAX)
				w->items[w->n++] = c->items[j];
			else
				c->items[left++] = c->items[j];
		}
		c->n = left;
	}
	k = fr_window_items_sort(&w->items, &s->scratch, w->n, w->cap);
	/* kept whole, the names stay where their chunks are */
	if (k == 0 && !s->q.skip_exe)
		k = window_exe_resolve(w, &s->pids, &s->exes_cap, !s->keep);
	/* the loaders go on, a slice ahead of the one being read */
	if (k == 0 && s->next < w->ncd && s->nbatches < 2)
		window_workers_schedule(w);
	return k < 0 ? k : 1;
}
