/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text built piece by piece into a fixed buffer: each piece printf-like,
 * the whole cut at the buffer's end (always NUL-terminated), never more.
 */
#ifndef FR_STR_APPEND_H
#define FR_STR_APPEND_H

#include <stddef.h>

/* Appends to @buf (@len bytes, *@at of them used), cut at its end. */
__attribute__((format(printf, 4, 5))) void fr_str_append(char *buf, size_t len, size_t *at, const char *fmt, ...);

#endif
