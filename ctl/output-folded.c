/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --format folded: the samples as collapsed stacks, one line per distinct
 * stack, "comm;outermost;...;leaf count", the input of flamegraph.pl,
 * speedscope and inferno.  Frames are function names; a frame without one
 * is its module and offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "frctl.h"

struct slot {
	char *key;
	uint64_t count;
};

struct fr_folded {
	struct slot *v;
	size_t cap, n;
	uint64_t samples;
};

struct fr_folded *fr_folded_new(void)
{
	return calloc(1, sizeof(struct fr_folded));
}

struct fr_folded *fr_folded_free(struct fr_folded *f)
{
	if (!f)
		return NULL;
	for (size_t i = 0; i < f->cap; i++)
		free(f->v[i].key);
	free(f->v);
	free(f);
	return NULL;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct slot *find(struct slot *v, size_t cap, const char *key)
{
	for (size_t i = hash(key) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!v[i].key || strcmp(v[i].key, key) == 0)
			return &v[i];
}

static int grow(struct fr_folded *f)
{
	size_t cap = f->cap ? f->cap * 2 : 1024;
	struct slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < f->cap; i++)
		if (f->v[i].key)
			*find(v, cap, f->v[i].key) = f->v[i];
	free(f->v);
	f->v = v;
	f->cap = cap;
	return 0;
}

/* Appends @p[0..n) with the characters the format uses replaced. */
static void put_clean(FILE *m, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(p[i] == ';' || p[i] == '\n' || p[i] == '\r' ? '_' : p[i], m);
}

int fr_folded_add(struct fr_folded *f, struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
	int n = fr_window_frames(w, e, frames, FR_SAMPLE_FRAMES_MAX);
	unsigned nk = e->r.sample.kernel_frames;
	_cleanup_free_ char *key = NULL;
	size_t len = 0;
	char name[512];
	struct slot *s;
	FILE *m;

	if (n < 0)
		return n;
	m = open_memstream(&key, &len);
	if (!m)
		return -ENOMEM;
	put_clean(m, e->r.comm, e->r.comm_len);
	/* root first: user frames outermost to innermost, then the kernel's */
	for (int i = n - 1; i >= (int)nk; i--) {
		fputc(';', m);
		fr_frame_name(&frames[i], false, name, sizeof(name));
		put_clean(m, name, strlen(name));
	}
	for (int i = MIN((int)nk, n) - 1; i >= 0; i--) {
		fputc(';', m);
		fr_frame_name(&frames[i], false, name, sizeof(name));
		put_clean(m, name, strlen(name));
	}
	if (fclose(m) != 0)
		return -ENOMEM;
	if ((f->n + 1) * 4 > f->cap * 3 && grow(f) < 0)
		return -ENOMEM;
	s = find(f->v, f->cap, key);
	if (!s->key) {
		s->key = TAKE_PTR(key);
		f->n++;
	}
	s->count++;
	f->samples++;
	return 0;
}

static int cmp_slot(const void *a, const void *b)
{
	return strcmp(((const struct slot *)a)->key, ((const struct slot *)b)->key);
}

uint64_t fr_folded_print(struct fr_folded *f, FILE *out)
{
	size_t k = 0;

	/* compact the used slots, then sort them: stable output for diffs */
	for (size_t i = 0; i < f->cap; i++)
		if (f->v[i].key)
			f->v[k++] = f->v[i];
	for (size_t i = k; i < f->cap; i++)
		f->v[i] = (struct slot){};
	if (k > 1)
		qsort(f->v, k, sizeof(*f->v), cmp_slot);
	for (size_t i = 0; i < k; i++)
		fprintf(out, "%s %" PRIu64 "\n", f->v[i].key, f->v[i].count);
	/* the table is sorted now, no longer hashed: printing is the end */
	f->n = k;
	return f->samples;
}
