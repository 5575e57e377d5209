/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large arrays that are filled once and read many times (a window's
 * payloads and items): anonymous mappings the kernel may back with
 * transparent huge pages, so that filling 100 MB costs a few dozen page
 * faults rather than tens of thousands.
 */
#ifndef FR_BIG_ALLOC_H
#define FR_BIG_ALLOC_H

#include <stddef.h>

/* Zeroed memory of @n bytes (n may be 0), or NULL with errno set. */
void *fr_big_alloc(size_t n);
void fr_big_free(void *p, size_t n);

#endif
