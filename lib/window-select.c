/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which chunks a window needs, from their headers alone: those whose
 * records reach into [since, until], the keyframe chunks just before
 * since (what every process ran then), and the chunks between that
 * keyframe and the window, whose exec and fork records name processes
 * born after it.  In store order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-format.h"
#include "window-internal.h"

struct collect {
	struct fr_chunk_ref *refs;
	size_t n, cap;
	uint64_t since, until;
	const struct fr_window_query *q;
	/* the keyframe just before the window (all its chunks share one time) */
	struct fr_chunk_ref *kf;
	size_t nkf, kfcap;
	uint64_t kf_time;
	/* chunks between that keyframe and the window: their exec and fork
	 * records name processes born after the keyframe */
	struct fr_chunk_ref *pre;
	size_t npre, precap;
};

static void prune_pre(struct collect *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->npre; i++)
		if (window_ref_last(&c->pre[i]) >= c->kf_time)
			c->pre[k++] = c->pre[i];
	c->npre = k;
}

static int collect_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct collect *c = userdata;
	int64_t off = ref->info.realtime_offset;
	uint64_t first = ref->info.first_ts + (uint64_t)off;
	uint64_t last = ref->info.last_ts + (uint64_t)off;

	if (c->q->one_boot && memcmp(ref->info.boot_id, c->q->boot_id, 16) != 0)
		return 0;
	if (ref->info.cpu == FR_CPU_META && last < c->since) {
		if (c->nkf && first < c->kf_time)
			return 0;
		if (!c->nkf || first > c->kf_time)
			c->nkf = 0;
		c->kf_time = first;
		prune_pre(c);
		if (window_grow((void **)&c->kf, &c->kfcap, c->nkf + 1, sizeof(*c->kf)) < 0)
			return -ENOMEM;
		c->kf[c->nkf++] = *ref;
		return 0;
	}
	if (last < c->since) {
		if (c->nkf && last < c->kf_time)
			return 0;
		if (window_grow((void **)&c->pre, &c->precap, c->npre + 1, sizeof(*c->pre)) < 0)
			return -ENOMEM;
		c->pre[c->npre++] = *ref;
		return 0;
	}
	if (last < c->since || first > c->until)
		return 0;
	if (window_grow((void **)&c->refs, &c->cap, c->n + 1, sizeof(*c->refs)) < 0)
		return -ENOMEM;
	c->refs[c->n++] = *ref;
	return 0;
}

static void collect_free(struct collect *c)
{
	free(c->refs);
	free(c->kf);
	free(c->pre);
}

/* The chunks collected: the window's, then the keyframe before it and the
 * context between them.  Frees the rest of @c. */
static int collect_finish(struct collect *c, struct fr_chunk_ref **ret, size_t *nret)
{
	int k = 0;

	/* without a keyframe before the window there is nothing to anchor
	 * the context chunks to: the window names what it can */
	if (!c->nkf)
		c->npre = 0;
	prune_pre(c);
	for (size_t i = 0; i < c->nkf + c->npre; i++) {
		if (window_grow((void **)&c->refs, &c->cap, c->n + 1, sizeof(*c->refs)) < 0) {
			k = -ENOMEM;
			goto fail;
		}
		c->refs[c->n++] = i < c->nkf ? c->kf[i] : c->pre[i - c->nkf];
	}
	free(c->kf);
	free(c->pre);
	*ret = c->refs;
	*nret = c->n;
	return 0;
fail:
	collect_free(c);
	return k;
}

int fr_window_select(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_chunk_ref **ret,
		     size_t *nret)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .q = q };
	/* one boot: the keyframes the segments' summaries name may be
	 * another boot's */
	int k = q->one_boot ? fr_store_reader_foreach(r, collect_cb, &c) :
			      fr_store_reader_foreach_since(r, q->since_ns, collect_cb, &c);

	if (k < 0) {
		collect_free(&c);
		return k;
	}
	return collect_finish(&c, ret, nret);
}

int fr_window_select_from(const struct fr_window_query *q, const struct fr_chunk_ref *refs, size_t n,
			  struct fr_chunk_ref **ret, size_t *nret)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .q = q };

	for (size_t i = 0; i < n; i++) {
		int k = collect_cb(&refs[i], &c);
		if (k < 0) {
			collect_free(&c);
			return k;
		}
	}
	return collect_finish(&c, ret, nret);
}
