/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Address lookup in a table of ranges sorted by start, where each entry
 * begins with { uint64_t start; uint64_t size; } (symbol tables), or
 * with { uint64_t start; uint64_t end; } (mappings). */
#ifndef FR_RANGE_FIND_H
#define FR_RANGE_FIND_H

#include <stddef.h>
#include <stdint.h>

struct fr_range {
	uint64_t start, size;
};

/* The entry of @v[0..n) (@stride bytes apart) whose [start, start + size)
 * holds @addr: the last one starting at or below it.  NULL if none. */
static inline const void *fr_range_find(const void *v, size_t n, size_t stride, uint64_t addr)
{
	const char *base = v;
	const struct fr_range *r;
	size_t lo = 0, hi = n;

	if (!n)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct fr_range *)(base + mid * stride))->start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	r = (const struct fr_range *)(base + lo * stride);
	if (r->start > addr || addr - r->start >= r->size)
		return NULL;
	return r;
}

/* The same for disjoint spans, each entry beginning with { uint64_t
 * start; uint64_t end; } ([start, end): mappings, as /proc/PID/maps
 * lists them, sorted). */
struct fr_span {
	uint64_t start, end;
};

static inline const void *fr_span_find(const void *v, size_t n, size_t stride, uint64_t addr)
{
	const char *base = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct fr_span *s = (const struct fr_span *)(base + mid * stride);
		if (addr < s->start)
			hi = mid;
		else if (addr >= s->end)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

#endif
