/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_PERFETTO_H
#define FR_CTL_OUTPUT_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "../lib/window.h"

/* --format perfetto: Trace Event Format JSON, streamed to @out. */
struct fr_perfetto;
struct fr_perfetto *fr_perfetto_begin(FILE *out, unsigned ncpu);
void fr_perfetto_add(struct fr_perfetto *p, struct fr_window *w, const struct fr_window_entry *e);
/* Writes the names and the trailer and frees @p. */
void fr_perfetto_end(struct fr_perfetto *p, const uint8_t *boot_id);

#endif
