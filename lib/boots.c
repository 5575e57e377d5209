/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boots.h"

struct acc {
	struct fr_boot *v;
	size_t n, cap;
};

static int boot_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct acc *a = userdata;
	uint64_t first = ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
	uint64_t last = ref->info.last_ts + (uint64_t)ref->info.realtime_offset;
	struct fr_boot *b = NULL;

	for (size_t i = 0; i < a->n; i++)
		if (memcmp(a->v[i].boot_id, ref->info.boot_id, 16) == 0) {
			b = &a->v[i];
			break;
		}
	if (!b) {
		if (a->n == a->cap) {
			size_t c = a->cap ? a->cap * 2 : 8;
			struct fr_boot *v = realloc(a->v, c * sizeof(*v));
			if (!v)
				return -ENOMEM;
			a->v = v;
			a->cap = c;
		}
		b = &a->v[a->n++];
		*b = (struct fr_boot){ .first_ns = first, .last_ns = last };
		memcpy(b->boot_id, ref->info.boot_id, 16);
	}
	if (first < b->first_ns)
		b->first_ns = first;
	if (last > b->last_ns)
		b->last_ns = last;
	b->chunks++;
	b->records += ref->info.nrecords;
	return 0;
}

static int cmp_boot(const void *x, const void *y)
{
	const struct fr_boot *a = x, *b = y;
	return a->first_ns < b->first_ns ? -1 : a->first_ns > b->first_ns;
}

int fr_store_boots(struct fr_store_reader *r, struct fr_boot **ret, size_t *n)
{
	struct acc a = {};
	int k = fr_store_reader_foreach(r, boot_cb, &a);

	if (k < 0) {
		free(a.v);
		return k;
	}
	if (a.n > 1)
		qsort(a.v, a.n, sizeof(*a.v), cmp_boot);
	*ret = a.v;
	*n = a.n;
	return 0;
}

int fr_boot_lookup(const struct fr_boot *boots, size_t n, const char *spec)
{
	char *end;
	long rel;

	if (strlen(spec) == 32) {
		uint8_t id[16];
		for (int i = 0; i < 16; i++) {
			unsigned v;
			if (sscanf(spec + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", spec[2 * i]) ||
			    !strchr("0123456789abcdefABCDEF", spec[2 * i + 1]))
				return -EINVAL;
			id[i] = (uint8_t)v;
		}
		for (size_t i = 0; i < n; i++)
			if (memcmp(boots[i].boot_id, id, 16) == 0)
				return (int)i;
		return -ENOENT;
	}
	errno = 0;
	rel = strtol(spec, &end, 10);
	if (errno || *end || end == spec || rel > 0)
		return -EINVAL;
	if ((size_t)(-rel) >= n)
		return -ENOENT;
	return (int)(n - 1 + (size_t)rel);
}

void *fr_boot_slot(void **v, size_t *n, size_t size, const uint8_t boot_id[16], bool *ret_new)
{
	uint8_t *a = *v, *e;

	if (ret_new)
		*ret_new = false;
	for (size_t i = 0; i < *n; i++)
		if (memcmp(a + i * size, boot_id, 16) == 0)
			return a + i * size;
	a = realloc(a, (*n + 1) * size);
	if (!a)
		return NULL;
	*v = a;
	e = a + (*n)++ * size;
	memset(e, 0, size);
	memcpy(e, boot_id, 16);
	if (ret_new)
		*ret_new = true;
	return e;
}
