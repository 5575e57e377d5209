/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "window.h"

struct collect {
	struct fr_chunk_ref *refs;
	size_t n, cap;
	uint64_t since, until;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int collect_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct collect *c = userdata;
	int64_t off = ref->info.realtime_offset;
	uint64_t first = ref->info.first_ts + (uint64_t)off;
	uint64_t last = ref->info.last_ts + (uint64_t)off;

	if (last < c->since || first > c->until)
		return 0;
	if (grow((void **)&c->refs, &c->cap, c->n + 1, sizeof(*c->refs)) < 0)
		return -ENOMEM;
	c->refs[c->n++] = *ref;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct fr_window_entry *x = a, *y = b;

	if (x->wall_ns != y->wall_ns)
		return x->wall_ns < y->wall_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Cgroup descriptions are per chunk: at most this many are remembered. */
#define CGROUPS_PER_CHUNK 256

static int decode_chunk(struct fr_window *w, const struct fr_chunk_ref *ref, const uint8_t *raw,
			uint64_t since, uint64_t until, uint64_t *order)
{
	struct { uint64_t id; const char *path; uint32_t len; } cg[CGROUPS_PER_CHUNK];
	struct fr_codec_state st = {};
	unsigned ncg = 0;
	size_t pos = 0;
	uint32_t idx = (uint32_t)w->nchunks - 1;

	for (uint32_t i = 0; i < ref->info.nrecords; i++) {
		struct fr_window_entry *e;
		struct fr_record rec;

		if (fr_record_decode(&st, raw, ref->info.raw_size, &pos, &rec) < 0) {
			w->records_bad += ref->info.nrecords - i;
			break;
		}
		rec.cpu = ref->info.cpu;
		if (rec.type == FR_REC_CGROUP) {
			/* a ring: the writer repeats descriptions in chunks with
			 * many cgroups, and the newest is what later records use */
			cg[ncg++ % CGROUPS_PER_CHUNK] = (typeof(cg[0])){ rec.cgroup_id, rec.cgroup.path, rec.cgroup.path_len };
			continue;
		}
		uint64_t wall = rec.ts + (uint64_t)ref->info.realtime_offset;
		if (wall < since || wall > until)
			continue;
		if (grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)) < 0)
			return -ENOMEM;
		e = &w->v[w->n++];
		*e = (struct fr_window_entry){ .r = rec, .wall_ns = wall, .chunk = idx, .order = (*order)++ };
		for (unsigned k = 0; k < MIN(ncg, CGROUPS_PER_CHUNK); k++)
			if (cg[k].id == rec.cgroup_id) {
				e->cgroup = cg[k].path;
				e->cgroup_len = cg[k].len;
				break;
			}
	}
	return 0;
}

int fr_window_load(struct fr_store_reader *r, uint64_t since_ns, uint64_t until_ns,
		   struct fr_window **ret)
{
	struct collect c = { .since = since_ns, .until = until_ns };
	struct fr_window *w;
	uint64_t order = 0;
	size_t bufcap = 0, chcap = 0;
	int k;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	k = fr_store_reader_foreach(r, collect_cb, &c);
	if (k < 0)
		goto fail;
	for (size_t i = 0; i < c.n; i++) {
		uint8_t *raw = NULL;

		k = fr_store_reader_load(r, &c.refs[i], &raw);
		if (k == -EBADMSG) {
			w->chunks_damaged++;
			continue;
		}
		if (k < 0)
			goto fail;
		if (grow((void **)&w->bufs, &bufcap, w->nbufs + 1, sizeof(*w->bufs)) < 0 ||
		    grow((void **)&w->chunks, &chcap, w->nchunks + 1, sizeof(*w->chunks)) < 0) {
			free(raw);
			k = -ENOMEM;
			goto fail;
		}
		w->bufs[w->nbufs++] = raw;
		w->chunks[w->nchunks++] = c.refs[i].info;
		k = decode_chunk(w, &c.refs[i], raw, since_ns, until_ns, &order);
		if (k < 0)
			goto fail;
	}
	free(c.refs);
	qsort(w->v, w->n, sizeof(*w->v), cmp_entry);
	*ret = w;
	return 0;
fail:
	free(c.refs);
	fr_window_free(w);
	return k;
}

struct fr_window *fr_window_free(struct fr_window *w)
{
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->nbufs; i++)
		free(w->bufs[i]);
	free(w->bufs);
	free(w->chunks);
	free(w->v);
	free(w);
	return NULL;
}
