/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counts by string (stacks, functions, processes): an open hash table that
 * is sorted once when done. */
#ifndef FR_CTL_STRING_COUNTS_H
#define FR_CTL_STRING_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fr_count {
	char *key;
	uint64_t n;
};

struct fr_counts {
	struct fr_count *v;
	size_t cap, used;
};

/* Counts @key once more (copied).  -ENOMEM. */
/* FNV-1a of the string @s: the hash of these tables (and what-changed.h's). */
uint64_t fr_str_hash(const char *s);
int fr_counts_add(struct fr_counts *c, const char *key);
/* Counts @key @n times more (a weight: blocked time, bytes). */
int fr_counts_add_n(struct fr_counts *c, const char *key, uint64_t n);
/* Moves the entries to the front, sorted by key (bytewise) or by count
 * (most first, then key), and returns how many; no adds after this. */
size_t fr_counts_sort(struct fr_counts *c, bool by_count);
void fr_counts_done(struct fr_counts *c);

#endif
