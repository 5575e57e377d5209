/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_PPROF_H
#define FR_CTL_OUTPUT_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/window.h"

/* --format pprof (output-pprof.c): a gzipped pprof profile of the samples
 * (@offcpu: of the off-CPU stacks, by blocked time); @hz: the sampling
 * rate, for the CPU time a sample stands for. */
struct fr_pprof;
struct fr_pprof *fr_pprof_new(bool offcpu, uint32_t hz);
/* Whether the profile takes @r (samples; with offcpu, waits with a stack). */
bool fr_pprof_wants(const struct fr_pprof *p, const struct fr_record *r);
int fr_pprof_add(struct fr_pprof *p, struct fr_window *w, const struct fr_window_entry *e);
uint64_t fr_pprof_count(const struct fr_pprof *p);
int fr_pprof_write(struct fr_pprof *p, FILE *out);
struct fr_pprof *fr_pprof_free(struct fr_pprof *p);

#endif
