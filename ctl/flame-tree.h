/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flame graphs for frctl report's page: folded stacks (output-folded.h)
 * as a tree of frames, heaviest-agnostic (the script sorts), pruned to a
 * number of frames: those too light to see become one "[other]" per
 * parent.  The differential graph is the window's tree with each frame's
 * weight in the baseline beside it, scaled to the window's length (the
 * shape is the window's, the colour the change: Brendan Gregg's
 * differential flame graphs).
 */
#ifndef FR_CTL_FLAME_TREE_H
#define FR_CTL_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>

struct fr_folded;
struct json_object;

/* {n, v, c: [...]} of @f's stacks under "all", at most about @max frames;
 * frames folded into "[other]" are added to *aggregated.  NULL when @f is
 * empty. */
struct json_object *flame_tree_json(struct fr_folded *f, size_t max, uint64_t *aggregated);

/* The same of @now, each frame with "b": its weight in @base times
 * @scale (0 when not there): now's span / base's, so that a frame that
 * took as much CPU a second in both has b == v, whatever else changed
 * (scaled to the totals instead, all else would shrink when one thing
 * grows).  NULL when either is empty. */
struct json_object *flame_diff_json(struct fr_folded *now, struct fr_folded *base, double scale, size_t max,
				    uint64_t *aggregated);

#endif
