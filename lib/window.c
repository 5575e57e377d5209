/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A window of a store (window.h): opened as a stream of slices
 * (fr_window_stream_open()), or read whole (fr_window_load()), which is
 * the same stream read to its end, its slices put one after another and
 * its chunks kept for their records to be decoded again.  The parts of
 * the reader are listed in window-internal.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

#include "big-alloc.h"
#include "demangle.h"
#include "kernel-names.h"
#include "macro.h"
#include "window-internal.h"

static int cmp_first(const void *a, const void *b, void *userdata)
{
	const struct fr_chunk_ref *refs = userdata;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t fx = window_ref_first(&refs[x]), fy = window_ref_first(&refs[y]);

	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A window of @refs (store order; taken, also on failure), nothing
 * loaded yet. */
static int window_open(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_chunk_ref *refs,
		       size_t n, bool keep, struct fr_window **ret)
{
	struct fr_window_stream *s;
	struct fr_window *w;

	w = calloc(1, sizeof(*w));
	if (!w) {
		free(refs);
		return -ENOMEM;
	}
	w->store_fd = -EBADF;
	pthread_mutex_init(&w->ksyms_lock, NULL);
	(void)fr_demangler_new(&w->demangler); /* without one, names stay mangled */
	if (fr_store_reader_dir_fd(r) >= 0)
		w->store_fd = fcntl(fr_store_reader_dir_fd(r), F_DUPFD_CLOEXEC, 3);
	else {
		/* an incident's kernel names, read once: the stream may drop
		 * their chunks before the last sample they name (the window
		 * counts a damaged one when it loads it) */
		int k = fr_kernel_names_load(r, refs, n, &w->names, NULL);
		if (k < 0) {
			free(refs);
			fr_window_free(w);
			return k;
		}
	}
	s = w->stream = calloc(1, sizeof(*s));
	if (!s) {
		free(refs);
		fr_window_free(w);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->done, NULL);
	s->r = r;
	s->q = *q;
	s->keep = keep;
	s->refs = refs;
	w->chunks = calloc(n ? n : 1, sizeof(*w->chunks));
	w->cd = calloc(n ? n : 1, sizeof(*w->cd));
	s->sc = calloc(n ? n : 1, sizeof(*s->sc));
	s->order = calloc(n ? n : 1, sizeof(*s->order));
	s->open = calloc(n ? n : 1, sizeof(*s->open));
	s->jobs = calloc(n ? n : 1, sizeof(*s->jobs));
	if (!w->chunks || !w->cd || !s->sc || !s->order || !s->open || !s->jobs) {
		fr_window_free(w);
		return -ENOMEM;
	}
	w->nchunks = w->ncd = n;
	for (size_t i = 0; i < n; i++) {
		w->chunks[i] = refs[i].info;
		s->order[i] = (uint32_t)i;
	}
	qsort_r(s->order, n, sizeof(*s->order), cmp_first, refs);
	/* the newest chunk's boot: most windows have one */
	if (n && !q->no_threads)
		window_ksyms_prefetch(w, refs[s->order[n - 1]].info.boot_id);
	*ret = w;
	return 0;
}

int fr_window_stream_open(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_window **ret)
{
	struct fr_chunk_ref *refs;
	size_t n;
	int k = fr_window_select(r, q, &refs, &n);

	if (k < 0)
		return k;
	return window_open(r, q, refs, n, false, ret);
}

/* Read whole, the damaged chunks are left out of w->chunks (as if the
 * store did not have them), the items' chunk indices following. */
static int drop_damaged(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	_cleanup_free_ uint32_t *to = malloc((w->ncd ? w->ncd : 1) * sizeof(*to));
	size_t n = 0;

	if (!to)
		return -ENOMEM;
	for (size_t i = 0; i < w->ncd; i++) {
		if (s->sc[i].damaged) {
			window_chunk_done(&w->cd[i]);
			continue;
		}
		to[i] = (uint32_t)n;
		w->chunks[n] = w->chunks[i];
		if (n != i) {
			w->cd[n] = w->cd[i];
			w->cd[i] = (struct fr_window_chunk){};
		}
		n++;
	}
	if (n == w->ncd)
		return 0;
	for (size_t i = 0; i < w->n; i++)
		w->items[i].chunk = to[w->items[i].chunk];
	w->nchunks = n;
	return 0;
}

int fr_window_load_refs(struct fr_store_reader *r, const struct fr_window_query *q, const struct fr_chunk_ref *refs,
			size_t n, struct fr_window **ret)
{
	struct fr_chunk_ref *own = malloc((n ? n : 1) * sizeof(*own));
	struct fr_window_item *all = NULL;
	size_t nall = 0, cap = 0;
	struct fr_window *w;
	int k;

	if (!own)
		return -ENOMEM;
	if (n)
		memcpy(own, refs, n * sizeof(*own));
	/* room for every item at once, sized from the headers (an item per
	 * record at most): what is not used is never touched */
	for (size_t i = 0; i < n; i++)
		cap += window_chunk_max_items(&refs[i]);
	k = window_open(r, q, own, n, true, &w);
	if (k < 0)
		return k;
	all = fr_big_alloc((cap ? cap : 1) * sizeof(*all));
	if (!all) {
		fr_window_free(w);
		return -ENOMEM;
	}
	/* the slices come in time order: end to end, they are the window */
	while ((k = fr_window_stream_next(w)) > 0) {
		if (nall + w->n > cap) { /* cannot be: the headers said */
			k = -EBADMSG;
			break;
		}
		/* a slice can be empty (its items NULL): no memcpy from NULL */
		if (w->n)
			memcpy(all + nall, w->items, w->n * sizeof(*all));
		nall += w->n;
	}
	/* nothing more to load: the threads end, the chunks stay */
	window_workers_stop(w);
	fr_big_free(w->stream->scratch, w->cap * sizeof(*w->stream->scratch));
	w->stream->scratch = NULL;
	fr_big_free(w->items, w->cap * sizeof(*w->items));
	w->items = all;
	w->n = nall;
	w->cap = cap ? cap : 1;
	if (k == 0)
		k = drop_damaged(w);
	if (k < 0) {
		fr_window_free(w);
		return k;
	}
	*ret = w;
	return 0;
}

int fr_window_load(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_window **ret)
{
	struct fr_chunk_ref *refs = NULL;
	size_t n;
	int k = fr_window_select(r, q, &refs, &n);

	if (k < 0)
		return k;
	k = fr_window_load_refs(r, q, refs, n, ret);
	free(refs);
	return k;
}

static void stream_free(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;

	window_workers_stop(w);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->done);
	for (size_t i = 0; s->sc && i < w->ncd; i++) {
		free(s->sc[i].buf.p);
		free(s->sc[i].itembuf.p);
		free(s->sc[i].entbuf.p);
		free(s->sc[i].linebuf.p);
		free(s->sc[i].offbuf.p);
	}
	for (size_t i = 0; i < s->nspares; i++)
		free(s->spares[i].p);
	fr_pid_map_done(&s->pids);
	fr_big_free(s->scratch, w->cap * sizeof(*s->scratch));
	free(s->spares);
	free(s->sc);
	free(s->order);
	free(s->open);
	free(s->jobs);
	free(s->refs);
	free(s);
	w->stream = NULL;
}

struct fr_window *fr_window_free(struct fr_window *w)
{
	if (!w)
		return NULL;
	/* the names were copied unless the chunks were kept */
	bool copied = w->stream && !w->stream->keep;

	if (w->stream)
		stream_free(w); /* first: its threads write to the chunks */
	window_exes_free(w, copied);
	/* all, not nchunks: a load that failed leaves tables anywhere */
	for (size_t i = 0; w->cd && i < w->ncd; i++)
		window_chunk_done(&w->cd[i]);
	free(w->cd);
	free(w->chunks);
	window_ksyms_free(w);
	fr_kernel_names_free(w->names);
	closep(&w->store_fd);
	pthread_mutex_destroy(&w->ksyms_lock);
	fr_demangler_free(w->demangler);
	fr_big_free(w->items, w->cap * sizeof(*w->items));
	free(w);
	return NULL;
}
