/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_STORE_SIZES_H
#define FR_CTL_STORE_SIZES_H

#include <stdbool.h>
#include <stdio.h>

#include "../lib/window.h"

/* frctl dump --sizes: the bytes of the chunks of @r in @q's window (their
 * times overlap it; @q's boot if one_boot), by record type and field
 * stream, to @out as text or one JSON object.  0, or a negative errno
 * after one line on stderr. */
int frctl_store_sizes(struct fr_store_reader *r, const struct fr_window_query *q, int zstd_level, bool json,
		      FILE *out);

#endif
