/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_FOLDED_H
#define FR_CTL_OUTPUT_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/window.h"

/* --format folded: collapsed stacks ("comm;root;...;leaf count") of the
 * samples added, for flame graph tools. */
struct fr_folded;
struct fr_folded *fr_folded_new(void);
/* @weight: what the stack counts for (1 for a sample) */
int fr_folded_add(struct fr_folded *f, struct fr_window *w, const struct fr_window_entry *e, uint64_t weight);
/* Prints the stacks in byte order, once, after the last add; returns the
 * number of samples. */
uint64_t fr_folded_print(struct fr_folded *f, FILE *out);
/* Or the stacks themselves, in byte order ("comm;root;...;leaf" and
 * weight), once, after the last add (report's flame graphs). */
struct fr_count;
size_t fr_folded_stacks(struct fr_folded *f, const struct fr_count **ret);
struct fr_folded *fr_folded_free(struct fr_folded *f);

#endif
