/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CTL_BUNDLE_H
#define FR_CTL_BUNDLE_H

#include "window-args.h"

/* Writes the window of @s to @path as a bundle (atomically).  Returns 0 or
 * an exit code (one line printed). */
int fr_bundle_write(const struct frctl_source *s, const char *path);

#endif
