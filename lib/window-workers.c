/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The threads that load a window's chunks ahead of its reader.  Chunks are
 * handed out in order of their first record, a slice's worth at a time
 * (window_workers_schedule()), at most two slices ahead of the one being
 * read; each thread takes the next chunk not taken and loads it
 * (window-chunk.c).  The reader, waiting for a slice, takes chunks too.
 * The buffers a chunk loads into come from those of chunks dropped
 * before it, so that reading a long window reuses a few slices' worth of
 * memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"
#include "window-internal.h"

/* Bytes of payload loaded per slice (at least one chunk), unless the
 * query says. */
#define SLICE_BYTES (512u << 10)

unsigned fr_window_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > FR_WINDOW_THREADS_MAX ? FR_WINDOW_THREADS_MAX : (unsigned)n;
}

static void *spare_take(struct fr_window_stream *s, size_t need, struct window_spare *ret)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < s->nspares; i++)
		if (s->spares[i].cap >= need && (best == SIZE_MAX || s->spares[i].cap < s->spares[best].cap))
			best = i;
	if (best != SIZE_MAX) {
		*ret = s->spares[best];
		s->spares[best] = s->spares[--s->nspares];
		return ret->p;
	}
	/* with room to spare, so that it fits the next chunks, which are
	 * much the same size but seldom exactly */
	need = ((need + need / 8) | 4095) + 1;
	*ret = (struct window_spare){ malloc(need), need };
	return ret->p;
}

static int spare_put(struct fr_window_stream *s, struct window_spare *sp)
{
	if (!sp->p)
		return 0;
	if (window_grow((void **)&s->spares, &s->sparecap, s->nspares + 1, sizeof(*s->spares)) < 0) {
		free(sp->p);
		*sp = (struct window_spare){};
		return -ENOMEM;
	}
	s->spares[s->nspares++] = *sp;
	*sp = (struct window_spare){};
	return 0;
}

/* Chunk @idx's records are all handed out: its buffers go to the chunks
 * loaded next.  Kept whole, only its items' room does (its records are
 * decoded again from its payload, its names still needed). */
void window_workers_drop(struct fr_window *w, uint32_t idx)
{
	struct fr_window_stream *s = w->stream;
	struct window_stream_chunk *c = &s->sc[idx];

	c->items = NULL;
	c->n = 0;
	if (s->keep) {
		(void)spare_put(s, &c->itembuf);
		return;
	}
	window_chunk_done(&w->cd[idx]);
	(void)spare_put(s, &c->buf);
	(void)spare_put(s, &c->itembuf);
	(void)spare_put(s, &c->entbuf);
	(void)spare_put(s, &c->linebuf);
	(void)spare_put(s, &c->offbuf);
}

/* Job @i, by a loading thread. */
static void run_job(struct fr_window *w, size_t i, struct window_loader *t)
{
	struct fr_window_stream *s = w->stream;

	window_chunk_load(w, s->r, &s->q, &s->refs[s->order[i]], &s->jobs[i], t);
}

/* A loading thread: takes the chunks handed out, in order, as long as
 * there are. */
static void *worker(void *userdata)
{
	struct window_worker *sw = userdata;
	struct fr_window_stream *s = sw->w->stream;
	struct window_loader t = { .dctx = ZSTD_createDCtx(), .slot = sw->slot };

	pthread_mutex_lock(&s->lock);
	while (t.dctx) {
		while (!s->stop && s->taken == s->limit)
			pthread_cond_wait(&s->work, &s->lock);
		if (s->stop)
			break;
		size_t i = s->taken++;
		pthread_mutex_unlock(&s->lock);
		run_job(sw->w, i, &t);
		pthread_mutex_lock(&s->lock);
		s->jobs[i].done = true;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	window_loader_done(&t);
	return NULL;
}

/* Hands the loading threads the next chunks in order of their first
 * record: a slice's worth of payload (one chunk at least), with the
 * buffers they load into. */
int window_workers_schedule(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t bytes = 0, slice = s->q.slice_bytes ? s->q.slice_bytes : SLICE_BYTES;
	int k = 0;

	while (s->next < w->ncd && (bytes == 0 || bytes < slice)) {
		uint32_t idx = s->order[s->next];
		struct window_stream_chunk *c = &s->sc[idx];
		size_t max = window_chunk_max_items(&s->refs[idx]);
		struct window_job *job = &s->jobs[s->next];
		/* the records decoded, kept unless only their lines are needed */
		bool rows = !(s->q.line && s->q.lines_only && s->q.skip_exe);

		*job = (struct window_job){ .idx = idx, .max = max,
			.buf = rows ? spare_take(s, s->refs[idx].info.raw_size, &c->buf) : NULL,
			.items = spare_take(s, max * sizeof(struct fr_window_item), &c->itembuf) };
		s->next++;
		if ((rows && !job->buf) || !job->items)
			k = -ENOMEM;
		if (s->q.line) {
			/* the lines (text takes about twice its payload; it
			 * grows if not), their offsets and the records' */
			job->lines = &c->linebuf;
			job->line_off = spare_take(s, (2 * max + 1) * sizeof(uint32_t), &c->offbuf);
			job->rec_off = job->line_off && rows ? job->line_off + max + 1 : NULL;
			if (!job->line_off || !spare_take(s, s->refs[idx].info.raw_size * 2, &c->linebuf))
				k = -ENOMEM;
		} else if (!s->keep && !(job->ents = spare_take(s, max * sizeof(struct fr_window_entry), &c->entbuf)))
			/* kept whole, records are decoded again from the
			 * payload when looked at: 32 bytes an item, not a
			 * decoded record each */
			k = -ENOMEM;
		if (k < 0) {
			job->k = k;
			job->done = true;
			break;
		}
		w->cd[idx].ents = job->ents;
		w->cd[idx].rec_off = job->rec_off;
		bytes += s->refs[idx].info.raw_size;
	}
	s->batch_end[s->nbatches++] = s->next;
	pthread_mutex_lock(&s->lock);
	/* a job that failed here is done already: the threads skip it */
	s->limit = k < 0 ? s->next - 1 : s->next;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	return k;
}

int window_workers_start(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	unsigned n = fr_window_threads();

	/* the calling thread's slot comes after the threads' */
	s->self = (struct window_loader){ .dctx = ZSTD_createDCtx(), .slot = n };
	if (!s->self.dctx)
		return -ENOMEM;
	/* no more threads than chunks: it helps too */
	for (unsigned t = 0; t < (s->q.no_threads ? 0 : MIN(n, w->ncd)); t++) {
		s->workers[t] = (struct window_worker){ w, t };
		if (pthread_create(&s->threads[s->nthreads], NULL, worker, &s->workers[t]) == 0)
			s->nthreads++;
	}
	s->started = true;
	return 0;
}

/* Waits for jobs[..end) to be done, doing those not taken yet. */
void window_workers_wait(struct fr_window *w, size_t end)
{
	struct fr_window_stream *s = w->stream;

	pthread_mutex_lock(&s->lock);
	for (size_t i = s->merged; i < end; i++)
		while (!s->jobs[i].done) {
			if (s->taken < end && s->taken < s->limit) {
				size_t j = s->taken++;
				pthread_mutex_unlock(&s->lock);
				run_job(w, j, &s->self);
				pthread_mutex_lock(&s->lock);
				s->jobs[j].done = true;
			} else
				pthread_cond_wait(&s->done, &s->lock);
		}
	pthread_mutex_unlock(&s->lock);
}

/* Ends the threads (once they are done with the chunk each has). */
void window_workers_stop(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;

	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	for (unsigned t = 0; t < s->nthreads; t++)
		pthread_join(s->threads[t], NULL);
	s->nthreads = 0;
	window_loader_done(&s->self);
}
