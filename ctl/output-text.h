/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_OUTPUT_TEXT_H
#define FR_CTL_OUTPUT_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "../lib/window.h"

/* Text: one line per record.  Colour only where fr_text_colour() says:
 * on a terminal, and not with NO_COLOR set or TERM=dumb. */
enum {
	FR_TEXT_COLOUR = 1 << 0,
	FR_TEXT_NO_DATE = 1 << 1, /* the time of day only */
	FR_TEXT_STACKS = 1 << 2,  /* offcpu records' stacks on lines under them */
	FR_TEXT_ONE_LINE = 1 << 3, /* not even a signal's stack under it (shown elsewhere) */
};
struct fr_text; /* the flags, and the last second formatted */
struct fr_out;
struct fr_text *fr_text_new(unsigned flags);
void fr_text_print(struct fr_text *t, struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e);
struct fr_text *fr_text_free(struct fr_text *t);
bool fr_text_colour(FILE *out);

#endif
