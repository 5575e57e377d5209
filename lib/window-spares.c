/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The buffers a window's chunks are loaded into.  Those of chunks dropped
 * are kept for the chunks loaded next, so that reading a long window
 * reuses a few slices' worth of memory; a loading thread takes them only
 * once a chunk's payload bore out its header.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "window-internal.h"

/* The spares are shared by the loading threads, which take them, and the
 * reader's, which puts back those of the chunks it dropped. */
static void *spare_take(struct fr_window_stream *s, size_t need, struct window_spare *ret)
{
	size_t best = SIZE_MAX;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nspares; i++)
		if (s->spares[i].cap >= need && (best == SIZE_MAX || s->spares[i].cap < s->spares[best].cap))
			best = i;
	if (best != SIZE_MAX) {
		*ret = s->spares[best];
		s->spares[best] = s->spares[--s->nspares];
	}
	pthread_mutex_unlock(&s->lock);
	if (best != SIZE_MAX)
		return ret->p;
	/* with room to spare, so that it fits the next chunks, which are
	 * much the same size but seldom exactly */
	need = ((need + need / 8) | 4095) + 1;
	*ret = (struct window_spare){ malloc(need), need };
	return ret->p;
}

int window_spare_put(struct fr_window_stream *s, struct window_spare *sp)
{
	int k = 0;

	if (!sp->p)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (window_grow((void **)&s->spares, &s->sparecap, s->nspares + 1, sizeof(*s->spares)) < 0) {
		free(sp->p);
		k = -ENOMEM;
	} else
		s->spares[s->nspares++] = *sp;
	pthread_mutex_unlock(&s->lock);
	*sp = (struct window_spare){};
	return k;
}

/* The room a chunk's records are decoded into is taken by the thread
 * that loads it, once its payload bore out its header (its zstd frame
 * decompresses to the header's raw_size): a header's counts alone, damaged
 * or crafted, cost no memory.  First the rows, into which the payload is
 * decompressed... */
uint8_t *window_job_take_rows(struct fr_window *w, struct window_job *job, const struct fr_chunk_ref *ref)
{
	return spare_take(w->stream, ref->info.raw_size, &w->stream->sc[job->idx].buf);
}

/* ... then, once it decompressed, the items (an item per record at
 * most), and the records decoded or their lines. */
int window_job_take_room(struct fr_window *w, struct window_job *job, const struct fr_chunk_ref *ref)
{
	struct fr_window_stream *s = w->stream;
	struct window_stream_chunk *c = &s->sc[job->idx];
	size_t max = job->max;

	if (!(job->items = spare_take(s, max * sizeof(struct fr_window_item), &c->itembuf)))
		return -ENOMEM;
	if (s->q.line) {
		/* the lines (text takes about twice its payload; it grows
		 * if not), their offsets and the records' */
		job->lines = &c->linebuf;
		job->line_off = spare_take(s, (2 * max + 1) * sizeof(uint32_t), &c->offbuf);
		job->rec_off = job->line_off && job->rows ? job->line_off + max + 1 : NULL;
		if (!job->line_off || !spare_take(s, ref->info.raw_size * 2, &c->linebuf))
			return -ENOMEM;
	} else if (!s->keep && !(job->ents = spare_take(s, max * sizeof(struct fr_window_entry), &c->entbuf)))
		/* kept whole, records are decoded again from the payload
		 * when looked at: 32 bytes an item, not a decoded record
		 * each */
		return -ENOMEM;
	w->cd[job->idx].ents = job->ents;
	w->cd[job->idx].rec_off = job->rec_off;
	return 0;
}
