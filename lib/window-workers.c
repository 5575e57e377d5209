/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The threads that load a window's chunks ahead of its reader.  Chunks are
 * handed out in order of their first record, a slice's worth at a time
 * (window_workers_schedule()), at most two slices ahead of the one being
 * read; each thread takes the next chunk not taken and loads it
 * (window-chunk.c).  The reader, waiting for a slice, takes chunks too.
 * The buffers a chunk loads into come from those of chunks dropped
 * before it (window-spares.c).
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
		(void)window_spare_put(s, &c->itembuf);
		return;
	}
	window_chunk_done(&w->cd[idx]);
	(void)window_spare_put(s, &c->buf);
	(void)window_spare_put(s, &c->itembuf);
	(void)window_spare_put(s, &c->entbuf);
	(void)window_spare_put(s, &c->linebuf);
	(void)window_spare_put(s, &c->offbuf);
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
 * record: a slice's worth of payload (one chunk at least).  They take
 * the buffers they load into (window_job_take_rows()). */
void window_workers_schedule(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t bytes = 0, slice = s->q.slice_bytes ? s->q.slice_bytes : SLICE_BYTES;
	/* the records decoded, kept unless only their lines are needed */
	bool rows = !(s->q.line && s->q.lines_only && s->q.skip_exe);

	while (s->next < w->ncd && (bytes == 0 || bytes < slice)) {
		uint32_t idx = s->order[s->next];

		s->jobs[s->next++] = (struct window_job){ .idx = idx, .max = window_chunk_max_items(&s->refs[idx]),
							   .rows = rows };
		bytes += s->refs[idx].info.raw_size;
	}
	s->batch_end[s->nbatches++] = s->next;
	pthread_mutex_lock(&s->lock);
	s->limit = s->next;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
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
