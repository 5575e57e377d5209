/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "big-alloc.h"
#include "macro.h"
#include "window-sort.h"

/* Stable LSD radix sort of the items by wall time, RADIX_BITS at a time
 * over the bits the window's span needs: a few linear passes. */
#define RADIX_BITS 11

static struct fr_window_item *scratch_get(struct fr_window_item **scratch, size_t cap)
{
	if (!*scratch)
		*scratch = fr_big_alloc(cap * sizeof(**scratch));
	return *scratch;
}

static int radix_sort(struct fr_window_item **items, struct fr_window_item **scratch, size_t n, size_t cap,
		      uint64_t lo, uint64_t hi)
{
	struct fr_window_item *a = *items, *b = scratch_get(scratch, cap);
	unsigned passes = (64 - (unsigned)__builtin_clzll(hi - lo) + RADIX_BITS - 1) / RADIX_BITS;

	if (!b)
		return -ENOMEM;
	for (unsigned p = 0; p < passes; p++) {
		size_t count[1u << RADIX_BITS] = {};
		unsigned shift = p * RADIX_BITS;
		size_t sum = 0;

		for (size_t i = 0; i < n; i++)
			count[((a[i].wall_ns - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < ELEMENTSOF(count); d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[((a[i].wall_ns - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++] = a[i];
		struct fr_window_item *t = a;
		a = b;
		b = t;
	}
	*items = a;
	*scratch = b;
	return 0;
}

/* The items in store order are ascending runs (a chunk's records), and
 * the runs chain into a few ascending sequences: one per CPU, each
 * CPU's chunks following each other in time.  Merging those few
 * sequences is one linear pass.  Ties go to the item earlier in store
 * order, as in a stable sort.  Returns 1 when the runs do not chain into
 * MERGE_WAYS sequences (the caller sorts instead). */
#define MERGE_WAYS 16
struct merge_run {
	size_t from, to, next; /* next: the following run of its sequence, 0 for none */
};

static int merge_sequences(struct fr_window_item **items, struct fr_window_item **scratch, size_t n, size_t cap,
			   struct merge_run *runs, size_t nruns)
{
	struct fr_window_item *a = *items, *b;
	struct {
		size_t head, tail; /* runs; index 0 is never a run (a sentinel) */
		size_t pos, end;   /* merge cursor: in run head */
	} seq[MERGE_WAYS];
	unsigned nseq = 0;

	for (size_t r = 1; r < nruns; r++) {
		uint64_t first = a[runs[r].from].wall_ns, best_last = 0;
		unsigned best = MERGE_WAYS;

		/* the sequence whose last item is latest but not after this run */
		for (unsigned q = 0; q < nseq; q++) {
			uint64_t last = a[runs[seq[q].tail].to - 1].wall_ns;
			if (last <= first && (best == MERGE_WAYS || last >= best_last)) {
				best = q;
				best_last = last;
			}
		}
		if (best == MERGE_WAYS) {
			if (nseq == MERGE_WAYS)
				return 1;
			best = nseq++;
			seq[best].head = r;
		} else
			runs[seq[best].tail].next = r;
		seq[best].tail = r;
	}
	b = scratch_get(scratch, cap);
	if (!b)
		return -ENOMEM;
	for (unsigned q = 0; q < nseq; q++) {
		seq[q].pos = runs[seq[q].head].from;
		seq[q].end = runs[seq[q].head].to;
	}
	for (size_t o = 0; o < n; o++) {
		unsigned m = 0;
		for (unsigned q = 1; q < nseq; q++) {
			const struct fr_window_item *x = &a[seq[q].pos], *y = &a[seq[m].pos];
			if (x->wall_ns < y->wall_ns || (x->wall_ns == y->wall_ns && seq[q].pos < seq[m].pos))
				m = q;
		}
		b[o] = a[seq[m].pos++];
		if (seq[m].pos == seq[m].end) {
			size_t next = runs[seq[m].head].next;
			if (next) {
				seq[m].head = next;
				seq[m].pos = runs[next].from;
				seq[m].end = runs[next].to;
			} else
				seq[m] = seq[--nseq];
		}
	}
	*items = b;
	*scratch = a;
	return 0;
}

int fr_window_items_sort(struct fr_window_item **items, struct fr_window_item **scratch, size_t n, size_t cap)
{
	const struct fr_window_item *a = *items;
	uint64_t lo = UINT64_MAX, hi = 0;
	struct merge_run *runs;
	size_t nruns = 1;
	int k;

	for (size_t i = 0; i < n; i++) {
		lo = MIN(lo, a[i].wall_ns);
		hi = MAX(hi, a[i].wall_ns);
		if (i && a[i].wall_ns < a[i - 1].wall_ns)
			nruns++;
	}
	if (nruns == 1) /* sorted already (or empty) */
		return 0;
	runs = calloc(nruns + 1, sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	nruns = 1;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || a[i].wall_ns < a[i - 1].wall_ns) {
			if (nruns > 1)
				runs[nruns - 1].to = i;
			runs[nruns++].from = i;
		}
	runs[nruns - 1].to = n;
	k = merge_sequences(items, scratch, n, cap, runs, nruns);
	free(runs);
	return k == 1 ? radix_sort(items, scratch, n, cap, lo, hi) : k;
}
