/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One chunk of a window: read, decompressed and decoded by a loading
 * thread (window-workers.c), its names (code, cgroups) put in its tables,
 * each of its records in the window made an item; with query.line, the
 * items' lines written while the chunk is in that thread's cache.  And
 * afterwards, an item's record decoded again from the chunk
 * (fr_window_get()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "out-buf.h"
#include "record-fields.h"
#include "window-internal.h"

_Static_assert(sizeof(struct fr_window_item) == 32, "items are sorted and kept by the million");

static int cmp_cgroup(const void *a, const void *b)
{
	const struct window_cgroup *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted by id, one per id: the last description of it. */
static void cgroups_finish(struct fr_window_chunk *c)
{
	size_t k = 0;

	if (c->ncg > 1)
		qsort(c->cg, c->ncg, sizeof(*c->cg), cmp_cgroup);
	for (size_t i = 0; i < c->ncg; i++) {
		if (k && c->cg[k - 1].id == c->cg[i].id)
			k--;
		c->cg[k++] = c->cg[i];
	}
	c->ncg = k;
}

static const struct window_cgroup *cgroup_find(const struct fr_window_chunk *c, uint64_t id)
{
	size_t lo = 0, hi = c->ncg;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->cg[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ncg && c->cg[lo].id == id ? &c->cg[lo] : NULL;
}

/* Records decoded at once (7 KiB of them, on the stack). */
#define DECODE_BATCH 64

/* Record @rec of loaded chunk @idx, its row at @start: a name goes into
 * the chunk's tables; a record of the window (or context for it) becomes
 * the next item of the chunk's slice, and streamed, the next entry. */
static int chunk_record(struct fr_window *w, uint32_t idx, const struct fr_chunk_ref *ref, struct window_job *job,
			struct fr_record *rec, size_t start, uint64_t since, uint64_t until)
{
	struct fr_window_chunk *c = &w->cd[idx];

	/* descriptions: cgroups in the chunk's table, code in its symtab */
	if (fr_record_type_is_description(rec->type)) {
		if (rec->type != FR_REC_CGROUP)
			return fr_symtab_add(&c->symtab, rec) < 0 ? -ENOMEM : 0;
		if (window_grow((void **)&c->cg, &c->cgcap, c->ncg + 1, sizeof(*c->cg)) < 0)
			return -ENOMEM;
		c->cg[c->ncg] = (struct window_cgroup){ rec->cgroup_id, rec->cgroup.path, rec->cgroup.path_len,
						      (uint32_t)c->ncg };
		c->ncg++;
		return 0;
	}
	uint64_t wall = rec->ts + (uint64_t)ref->info.realtime_offset;
	bool hidden = false;
	/* keyframe records, and exec/fork records before the window,
	 * are kept as context: they name the window's processes */
	if (rec->type == FR_REC_PROCESS)
		hidden = true;
	else if (wall > until)
		return 0;
	else if (wall < since) {
		if (rec->type != FR_REC_EXEC && rec->type != FR_REC_FORK)
			return 0;
		hidden = true;
	}
	if (job->n == job->max) /* cannot be: a record takes 7 bytes at least */
		return -EBADMSG;
	if (job->ents) {
		struct fr_record *to = &job->ents[job->n].r;
		if (to != rec)
			*to = *rec;
		to->cpu = ref->info.cpu;
		if (job->rec_off)
			job->rec_off[job->n] = (uint32_t)start;
		start = job->n;
	}
	job->items[job->n++] = (struct fr_window_item){ .wall_ns = wall, .chunk = idx, .pos = (uint32_t)start,
							 .pid = rec->pid, .type = rec->type, .hidden = hidden };
	return 0;
}

/* The first pass over loaded chunk @idx, its records read by @it (which
 * leaves them as rows in the chunk's buffer) in batches: names go into
 * its tables, and each record of the window (or context for it) becomes
 * an item in the chunk's slice of them. */
static int decode_chunk(struct fr_window *w, uint32_t idx, const struct fr_chunk_ref *ref, struct window_job *job,
			struct fr_record_iter *it, uint64_t since, uint64_t until)
{
	struct fr_window_chunk *c = &w->cd[idx];
	struct fr_record batch[DECODE_BATCH];
	size_t starts[DECODE_BATCH];

	for (uint32_t i = 0; i < ref->info.nrecords;) {
		size_t want = MIN(ref->info.nrecords - i, DECODE_BATCH), got;
		/* streamed, records are decoded where they are kept (those
		 * not kept are overwritten, or moved over by those after) */
		struct fr_window_entry *in_place = job->ents && job->max - job->n >= want ? &job->ents[job->n] : NULL;
		int k;

		got = in_place ? fr_record_iter_read(it, &in_place->r, sizeof(*in_place), starts, want)
			       : fr_record_iter_read(it, batch, sizeof(*batch), starts, want);
		for (size_t j = 0; j < got; j++)
			if ((k = chunk_record(w, idx, ref, job, in_place ? &in_place[j].r : &batch[j], starts[j], since,
					      until)) < 0)
				return k;
		i += (uint32_t)got;
		if (got < want) {
			/* short of nrecords at the end: types skipped */
			if (!fr_record_iter_done(it))
				job->bad = ref->info.nrecords - i;
			break;
		}
	}
	job->unknown = it->st.unknown;
	cgroups_finish(c);
	fr_symtab_finish(&c->symtab);
	return 0;
}

/* Streamed with query.line: the second pass over chunk @idx, once its
 * names are all known, writes the line of each of its items, in the
 * loading thread @slot, while the chunk is fresh in its cache. */
static int chunk_lines(struct fr_window *w, const struct fr_window_query *q, uint32_t idx, struct window_job *job,
		       unsigned slot)
{
	struct fr_window_chunk *c = &w->cd[idx];
	struct fr_out o = { .p = job->lines->p, .cap = job->lines->cap };

	for (size_t j = 0; j < job->n; j++) {
		const struct fr_window_item *it = &job->items[j];
		struct fr_window_entry *e = &job->ents[j];
		const struct window_cgroup *cg;

		job->line_off[j] = (uint32_t)o.len;
		if (it->hidden)
			continue;
		/* the record is in place: the rest of its entry joins it */
		cg = cgroup_find(c, e->r.cgroup_id);
		e->wall_ns = it->wall_ns;
		e->chunk = idx;
		e->cgroup = cg ? cg->path : NULL;
		e->cgroup_len = cg ? cg->len : 0;
		e->exe = NULL;
		e->exe_len = 0;
		e->kernel_thread = false;
		e->hidden = false;
		q->line(w, it, e, slot, &o, q->line_userdata);
		/* the offsets are 32 bits: no chunk's lines come near */
		if (o.len > UINT32_MAX)
			o.err = EFBIG;
	}
	job->line_off[job->n] = (uint32_t)o.len;
	*job->lines = (struct window_spare){ o.p, o.cap };
	c->lines = o.p;
	c->line_off = job->line_off;
	return -o.err;
}

/* Items a chunk can give: one per record, and a record takes 7 bytes at
 * least. */
size_t window_chunk_max_items(const struct fr_chunk_ref *ref)
{
	return MIN(ref->info.nrecords, ref->info.raw_size / 7);
}

/* Decodes item @it (the same bytes decoded when the window loaded). */
int window_item_decode(const struct fr_window *w, const struct fr_window_item *it, struct fr_record *r)
{
	const struct fr_chunk_info *ci = &w->chunks[it->chunk];
	struct fr_codec_state st = { .incompat_flags = ci->incompat_flags };
	size_t pos = it->pos;
	int k;

	if (w->cd[it->chunk].ents) {
		*r = w->cd[it->chunk].ents[it->pos].r;
		return 0;
	}
	if (!w->cd[it->chunk].buf)
		return -ENODATA; /* query.lines_only */
	if (w->cd[it->chunk].rec_off)
		pos = w->cd[it->chunk].rec_off[it->pos];
	k = fr_record_decode(&st, w->cd[it->chunk].buf, ci->raw_size, &pos, r);

	/* the time is delta-coded: it comes from the item */
	r->ts = it->wall_ns - (uint64_t)ci->realtime_offset;
	r->cpu = ci->cpu;
	return k;
}

int fr_window_get(const struct fr_window *w, size_t i, struct fr_window_entry *e)
{
	const struct fr_window_item *it = &w->items[i];
	const struct window_cgroup *cg;
	int k = window_item_decode(w, it, &e->r);

	e->wall_ns = it->wall_ns;
	e->chunk = it->chunk;
	e->hidden = it->hidden;
	e->exe = NULL;
	e->exe_len = 0;
	e->kernel_thread = false;
	if (it->exe) {
		const struct fr_window_exe *x = &w->exes[it->exe - 1];
		e->kernel_thread = x->kernel_thread;
		if (!x->kernel_thread) {
			e->exe = x->p;
			e->exe_len = x->len;
		}
	}
	cg = k == 0 ? cgroup_find(&w->cd[it->chunk], e->r.cgroup_id) : NULL;
	e->cgroup = cg ? cg->path : NULL;
	e->cgroup_len = cg ? cg->len : 0;
	return k;
}

const char *fr_window_line(const struct fr_window *w, size_t i, size_t *len)
{
	const struct fr_window_item *it = &w->items[i];
	const struct fr_window_chunk *c = &w->cd[it->chunk];

	*len = c->line_off[it->pos + 1] - c->line_off[it->pos];
	return c->lines + c->line_off[it->pos];
}

void window_loader_done(struct window_loader *t)
{
	ZSTD_freeDCtx(t->dctx);
	free(t->buf);
	free(t->ents);
	*t = (struct window_loader){};
}

/* Loads, decompresses and decodes the chunk of @job (and with query.line,
 * writes its lines), taking the room for them as its payload bears its
 * header out; the result in job->k. */
void window_chunk_load(struct fr_window *w, struct fr_store_reader *r, const struct fr_window_query *q,
		       const struct fr_chunk_ref *ref, struct window_job *job, struct window_loader *t)
{
	struct fr_record_iter it;

	job->k = fr_store_reader_read_payload(r, ref, &t->buf, &t->cap);
	if (job->k == 0 && job->rows && !(job->buf = window_job_take_rows(w, job, ref)))
		job->k = -ENOMEM;
	w->cd[job->idx].buf = job->buf;
	if (job->k == 0)
		job->k = fr_store_reader_decode_payload(r, t->dctx, ref, job->buf, &t->buf, &t->cap, &it);
	if (job->k == 0)
		job->k = window_job_take_room(w, job, ref);
	if (job->k < 0)
		return;
	/* lines are written from records decoded into the thread's own
	 * room, still in its cache, and not kept */
	if (job->lines && t->ents_cap < job->max) {
		size_t cap = MAX(job->max, t->ents_cap * 2);
		free(t->ents);
		t->ents = malloc(cap * sizeof(*t->ents));
		t->ents_cap = t->ents ? cap : 0;
		if (!t->ents) {
			job->k = -ENOMEM;
			return;
		}
	}
	if (job->lines)
		job->ents = t->ents;
	job->k = decode_chunk(w, job->idx, ref, job, &it, q->since_ns, q->until_ns);
	if (job->k == 0 && job->lines)
		job->k = chunk_lines(w, q, job->idx, job, t->slot);
	if (job->lines)
		job->ents = NULL;
}

void window_chunk_done(struct fr_window_chunk *c)
{
	free(c->cg);
	fr_symtab_done(&c->symtab);
	*c = (struct fr_window_chunk){};
}
