/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --format folded: the samples as collapsed stacks, one line per distinct
 * stack, "comm;outermost;...;leaf count", the input of flamegraph.pl,
 * speedscope and inferno.  Frames are function names (an inlined function
 * is a frame of its own, as if called); a frame without one is its module
 * and offset.  With --offcpu, the off-CPU records' stacks instead, each
 * counted by its blocked time in microseconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "output-folded.h"
#include "string-counts.h"

struct fr_folded {
	struct fr_counts stacks;
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
	fr_counts_done(&f->stacks);
	free(f);
	return NULL;
}

/* Appends @p[0..n) with the characters the format uses replaced. */
static void put_clean(FILE *m, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(p[i] == ';' || p[i] == '\n' || p[i] == '\r' ? '_' : p[i], m);
}

int fr_folded_add(struct fr_folded *f, struct fr_window *w, const struct fr_window_entry *e, uint64_t weight)
{
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
	/* kernel frames come first and are never expanded */
	unsigned nk = e->r.stack.kernel_frames;
	_cleanup_free_ char *key = NULL;
	size_t len = 0;
	char name[512];
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
	if (fclose(m) != 0 || fr_counts_add_n(&f->stacks, key, weight) < 0)
		return -ENOMEM;
	f->samples++;
	return 0;
}

uint64_t fr_folded_print(struct fr_folded *f, FILE *out)
{
	/* in byte order: stable output for diffs */
	size_t k = fr_counts_sort(&f->stacks, false);

	for (size_t i = 0; i < k; i++)
		fprintf(out, "%s %" PRIu64 "\n", f->stacks.v[i].key, f->stacks.v[i].n);
	return f->samples;
}

size_t fr_folded_stacks(struct fr_folded *f, const struct fr_count **ret)
{
	size_t k = fr_counts_sort(&f->stacks, false);

	*ret = f->stacks.v;
	return k;
}
