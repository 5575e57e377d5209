/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/window-sort against a reference stable sort: per-CPU streams of
 * chunk-sized runs (the merge), more streams than it merges (the radix
 * sort), runs out of order inside, many ties, sorted and empty input. */
#include <stdint.h>
#include <stdlib.h>

#include "big-alloc.h"
#include "window-sort.h"
#include "test.h"

static int cmp_ref(const void *a, const void *b)
{
	const struct fr_window_item *x = a, *y = b;

	if (x->wall_ns != y->wall_ns)
		return x->wall_ns < y->wall_ns ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos; /* pos: the store order */
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	return test_xorshift(&rng);
}

/* @streams CPUs writing chunks of @chunk records each, ticks of @step ns
 * (small steps: many ties across streams); @shuffle swaps neighbours
 * inside chunks now and then (records out of order). */
static void one(unsigned streams, size_t n, size_t chunk, uint64_t step, bool shuffle)
{
	size_t cap = n + 7;
	struct fr_window_item *items = fr_big_alloc(cap * sizeof(*items)), *want = malloc((n + 1) * sizeof(*want)), *scratch = NULL;
	uint64_t *clock = calloc(streams, sizeof(*clock));
	size_t i = 0;

	CHECK(items && want && clock);
	while (i < n) {
		unsigned s = (unsigned)(next() % streams);
		for (size_t k = 0; k < chunk && i < n; k++, i++) {
			clock[s] += next() % step;
			items[i] = (struct fr_window_item){ .wall_ns = 1000000 + clock[s], .pos = (uint32_t)i, .pid = s };
			if (shuffle && k && next() % 50 == 0) {
				uint64_t t = items[i].wall_ns;
				items[i].wall_ns = items[i - 1].wall_ns;
				items[i - 1].wall_ns = t;
			}
		}
	}
	memcpy(want, items, n * sizeof(*want));
	qsort(want, n, sizeof(*want), cmp_ref);
	CHECK_EQ(fr_window_items_sort(&items, &scratch, n, cap), 0);
	size_t bad = 0;
	for (i = 0; i < n; i++)
		bad += items[i].wall_ns != want[i].wall_ns || items[i].pos != want[i].pos;
	if (bad)
		fprintf(stderr, "streams %u n %zu chunk %zu step %llu shuffle %d: %zu out of place\n", streams, n,
			chunk, (unsigned long long)step, shuffle, bad);
	CHECK_EQ(bad, 0);
	fr_big_free(items, cap * sizeof(*items));
	fr_big_free(scratch, cap * sizeof(*scratch));
	free(want);
	free(clock);
}

int main(void)
{
	static const unsigned streams[] = { 1, 2, 3, 16, 17, 64 };

	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++)
		for (uint64_t step = 2; step <= 2000000; step *= 1000) {
			one(streams[s], 200000, 3000, step, false);
			one(streams[s], 200000, 3000, step, true);
			one(streams[s], 5000, 1, step, false);
		}
	one(1, 0, 1, 10, false);
	one(2, 1, 1, 10, false);
	return test_failures ? 1 : 0;
}
