/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_CALL_PATHS_H
#define FR_CTL_CALL_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/window.h"

/* Call paths by weight: the hottest, a sample weighing one, and those
 * most time was blocked in, an off-CPU wait weighing its duration.  A
 * path is the process name and the names of the record's frames,
 * outermost first, as the folded output writes them.  It is counted by a
 * 64-bit hash of that sequence (two of PATHS_MAX paths share one with
 * odds of about 1e-10), and named again for printing from a record that
 * had it (the window holds every record until it is freed): 48 bytes a
 * path however deep the stacks, 3 MiB at most a table: PATHS_MAX held;
 * when a new one finds them all taken, the quarter that may have weighed
 * least make room (lossy counting), so that a hot path that comes late
 * in a long window is still counted, the rare ones not. */
#define PATHS_MAX (64 * 1024)

struct path {
	uint64_t hash;
	uint64_t weight; /* since it was taken in */
	uint64_t err;    /* weight it may have had before: paths.bound then */
	size_t item;     /* a record with this path: index into the window */
};

struct paths {
	struct path *v;  /* [PATHS_MAX], n of them held */
	uint32_t *slot;  /* [PATHS_SLOTS]: by hash, 1 + index into v; 0 free */
	uint64_t *tmp;   /* [PATHS_MAX], for pruning */
	size_t n;
	uint64_t bound;  /* weight a path not held has had at most */
	uint64_t total;  /* of all the paths added */
	bool time;       /* weights are nanoseconds blocked, not samples */
	bool pruned, failed;
};

/* Counts @weight more for the path of @hash, which record @item of the
 * window has (the first one seen is kept, to name the path). */
void fr_paths_add(struct paths *p, uint64_t hash, size_t item, uint64_t weight);
void fr_paths_done(struct paths *p);
/* The frames of @e into @f and the hash of its path into @ret: how many
 * frames (<= 0: none), the innermost's name left in @name. */
int fr_path_hash(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame f[static FR_FRAMES_EXPANDED_MAX],
		 char *name, size_t len, uint64_t *ret);

#endif
