/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Putting a window's items in time order.  The items arrive in store
 * order: each chunk's records are an ascending run, and the runs of one
 * CPU follow each other in time, so they chain into one ascending sequence
 * per CPU.  Those are merged in one pass; when there are more than
 * MERGE_WAYS of them (many CPUs, or records out of order), a stable radix
 * sort on the time does it in a few.  Either way ties keep store order.
 */
#ifndef FR_WINDOW_SORT_H
#define FR_WINDOW_SORT_H

#include <stddef.h>

#include "window.h"

/* Sorts (*items)[0..n) by wall_ns, stably.  *items and *scratch are
 * fr_big_alloc() arrays of @cap items, the caller's to free; *scratch may
 * be NULL (allocated when needed).  The sorted items may end up in either:
 * the two pointers are swapped then.  Returns 0 or -ENOMEM (*items
 * unchanged). */
int fr_window_items_sort(struct fr_window_item **items, struct fr_window_item **scratch, size_t n, size_t cap);

#endif
