/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_REDACT_SOURCE_H
#define FR_CTL_REDACT_SOURCE_H

#include "window-args.h"

/* --redact (a->redact): cuts the classes it names, or those the
 * configuration enables, from s->meta, and makes s->reader a copy of the
 * window's chunks without them (s->redactor says what was cut).  Call
 * after the source is opened and its query set, before the window
 * loads.  Returns 0 or an exit code (one line printed). */
int frctl_source_redact(struct frctl *f, const struct frctl_window_args *a, struct frctl_source *s);

#endif
