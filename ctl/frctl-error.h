/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl's error lines: "frctl: " and one line, on stderr. */
#ifndef FR_CTL_FRCTL_ERROR_H
#define FR_CTL_FRCTL_ERROR_H

void frctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
