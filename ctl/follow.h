/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_FOLLOW_H
#define FR_CTL_FOLLOW_H

#include <stdbool.h>

#include "window-args.h"

/* dump -f (follow.c): the window of @a, then the records as they are
 * stored, in text or JSON Lines, until SIGINT or SIGTERM (exit 0). */
int frctl_dump_follow(struct frctl *f, const struct frctl_window_args *a, bool json, bool stacks);

#endif
