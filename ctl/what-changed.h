/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What changed: frctl report's comparison of its window with a baseline
 * (by default the same length just before it).  Each side is gathered
 * from its records in one pass (side_add()); the comparison ranks every
 * difference by how unusual it is: counts (CPU samples, waits, events)
 * by a test of their rates (a function going from 2 to 5 samples is
 * noise, from 40 to 400 is not), waits also by their p50 and p99, and
 * metrics by how far the window's median is from the baseline's spread.
 * Crashes and OOM kills lead; then new processes and the rest by score.
 */
#ifndef FR_CTL_WHAT_CHANGED_H
#define FR_CTL_WHAT_CHANGED_H

#include <stdbool.h>
#include <stdint.h>

#include "../lib/window.h"
#include "string-counts.h"

struct json_object;
struct fr_folded;
struct dist_map {
	struct dist *v;
	size_t cap, used;
};

#define SIDE_SERIES_MAX 16
struct side_series {
	char name[48];
	const char *unit;
	double scale; /* printed value = v * scale */
	double *v;
	uint64_t *t; /* wall ns */
	size_t n, cap;
};

/* One side: the window, or its baseline. */
struct side {
	uint64_t since, until; /* wall ns: the span its rates are over */
	uint64_t records, samples;
	uint64_t first, last;  /* its records' times */
	struct fr_counts seen;     /* processes (comm) with records of their own */
	struct fr_counts procs;    /* CPU samples by process */
	struct fr_counts funcs;    /* by function (where the CPU was) */
	struct fr_counts started;  /* exec by comm */
	struct fr_counts exited;   /* exit by comm */
	struct fr_counts crashed;  /* "comm SIGNAL": fatal signals */
	struct fr_counts ooms;     /* OOM kills by comm */
	struct fr_counts events;   /* TCP resets and retransmits by peer, marks */
	struct dist_map waits;     /* "kind comm call" -> durations */
	struct side_series metric[SIDE_SERIES_MAX];
	unsigned nmetric;
	struct fr_folded *cpu;     /* CPU stacks, for the differential flame graph (or NULL) */
};

/* @stacks: keep the CPU stacks (cpu), for the page's differential
 * flame graph. */
int side_init(struct side *s, uint64_t since, uint64_t until, bool stacks);
/* Adds record @e (item @i of @w) to @s. */
void side_add(struct side *s, struct fr_window *w, size_t i, const struct fr_window_entry *e);
void side_done(struct side *s);

/* Does @base hold enough to compare with: records, over a tenth of the
 * window's span at least (a store that began just before the window has
 * nothing to say of it)?  Its rates are over the part its records cover. */
bool side_usable(const struct side *base, const struct side *now);
/* The seconds a side's rates are over. */
double side_span_s(const struct side *s);

/* The changes from @base to @now, most unusual first, as a JSON array of
 * objects (documented in frctl(1), "What changed"; empty when @base is
 * not usable), or NULL on ENOMEM. */
struct json_object *what_changed(struct side *now, struct side *base);

/* Prints "What changed" for @changes (at most @max lines, then how many
 * more), with the two spans compared. */
void what_changed_print(struct json_object *changes, const struct side *now, const struct side *base, unsigned max);

/* The sides' spans as JSON: {"since": RFC 3339, "until": ..., "records": N}. */
struct json_object *side_span_json(const struct side *s);

#endif
