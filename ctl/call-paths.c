/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "../lib/symtab.h"
#include "call-paths.h"

#define PATHS_SLOTS (2 * PATHS_MAX) /* at most half full: short probes */

static uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL; /* FNV-1a */
	return h;
}

/* The slot of @hash: its own, or the free one where it goes.  The FNV
 * state's low bits mix poorly: the slot is taken from its high ones. */
static uint32_t *paths_slot(const struct paths *p, uint64_t hash)
{
	size_t i = (hash >> 40) & (PATHS_SLOTS - 1);

	while (p->slot[i] && p->v[p->slot[i] - 1].hash != hash)
		i = (i + 1) & (PATHS_SLOTS - 1);
	return &p->slot[i];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Drops the quarter (at least) of the paths with the least weight they
 * may have had (their weight and error): afterwards a path not held has
 * had at most p->bound, those dropped as well as those never held. */
static void paths_prune(struct paths *p)
{
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++)
		p->tmp[i] = p->v[i].weight + p->v[i].err;
	qsort(p->tmp, p->n, sizeof(*p->tmp), cmp_u64);
	p->bound = MAX(p->bound, p->tmp[p->n / 4]);
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].weight + p->v[i].err > p->bound)
			p->v[k++] = p->v[i];
	p->n = k;
	memset(p->slot, 0, PATHS_SLOTS * sizeof(*p->slot));
	for (size_t i = 0; i < k; i++)
		*paths_slot(p, p->v[i].hash) = (uint32_t)i + 1;
	p->pruned = true;
}

void fr_paths_add(struct paths *p, uint64_t hash, size_t item, uint64_t weight)
{
	uint32_t *s;

	if (!p->v && !p->failed) {
		p->v = malloc(PATHS_MAX * sizeof(*p->v));
		p->slot = calloc(PATHS_SLOTS, sizeof(*p->slot));
		p->tmp = malloc(PATHS_MAX * sizeof(*p->tmp));
		p->failed = !p->v || !p->slot || !p->tmp;
	}
	if (p->failed)
		return;
	s = paths_slot(p, hash);
	if (!*s) {
		if (p->n == PATHS_MAX) {
			paths_prune(p);
			s = paths_slot(p, hash);
		}
		p->v[p->n] = (struct path){ .hash = hash, .err = p->bound, .item = item };
		*s = (uint32_t)++p->n;
	}
	p->v[*s - 1].weight += weight;
	p->total += weight;
}

void fr_paths_done(struct paths *p)
{
	free(p->v);
	free(p->slot);
	free(p->tmp);
}

int fr_path_hash(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame f[static FR_FRAMES_EXPANDED_MAX],
		 char *name, size_t len, uint64_t *ret)
{
	int n = fr_window_frames(w, e, f, FR_FRAMES_EXPANDED_MAX);
	uint64_t h = hash_bytes(1469598103934665603ULL, e->r.comm, strlen(e->r.comm) + 1);

	/* frames are kernel first, each part leaf first, so from the last to
	 * the first is user space's outermost to the kernel's innermost, the
	 * folded order; each name ends with its NUL */
	for (int j = n - 1; j >= 0; j--) {
		fr_frame_name(&f[j], false, name, len);
		h = hash_bytes(h, name, strlen(name) + 1);
	}
	*ret = h;
	return n;
}
