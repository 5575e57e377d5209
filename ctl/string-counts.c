/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string-counts.h"

uint64_t fr_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of @key in @v (@cap a power of two): its own, or the free one
 * where it goes. */
static struct fr_count *slot(struct fr_count *v, size_t cap, const char *key)
{
	for (size_t i = fr_str_hash(key) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!v[i].key || strcmp(v[i].key, key) == 0)
			return &v[i];
}

int fr_counts_add(struct fr_counts *c, const char *key)
{
	return fr_counts_add_n(c, key, 1);
}

int fr_counts_add_n(struct fr_counts *c, const char *key, uint64_t n)
{
	struct fr_count *s;

	if ((c->used + 1) * 4 > c->cap * 3) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct fr_count *v = calloc(cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < c->cap; i++)
			if (c->v[i].key)
				*slot(v, cap, c->v[i].key) = c->v[i];
		free(c->v);
		c->v = v;
		c->cap = cap;
	}
	s = slot(c->v, c->cap, key);
	if (!s->key) {
		s->key = strdup(key);
		if (!s->key)
			return -ENOMEM;
		c->used++;
	}
	s->n += n;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct fr_count *)a)->key, ((const struct fr_count *)b)->key);
}

static int cmp_count(const void *a, const void *b)
{
	const struct fr_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

size_t fr_counts_sort(struct fr_counts *c, bool by_count)
{
	size_t k = 0;

	for (size_t i = 0; i < c->cap; i++)
		if (c->v[i].key)
			c->v[k++] = c->v[i];
	for (size_t i = k; i < c->cap; i++)
		c->v[i] = (struct fr_count){};
	if (k > 1)
		qsort(c->v, k, sizeof(*c->v), by_count ? cmp_count : cmp_key);
	return k;
}

void fr_counts_done(struct fr_counts *c)
{
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].key);
	free(c->v);
	*c = (struct fr_counts){};
}
