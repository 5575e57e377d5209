/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The boots a store holds, from chunk headers alone (as journalctl -b). */
#ifndef FR_BOOTS_H
#define FR_BOOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store-reader.h"

struct fr_boot {
	uint8_t boot_id[16];
	uint64_t first_ns, last_ns; /* wall clock */
	uint64_t chunks, records;
};

/* Boots oldest first (by their first record).  Caller frees *ret. */
int fr_store_boots(struct fr_store_reader *r, struct fr_boot **ret, size_t *n);

/* The element of boot @boot_id in the array *@v of *@n elements of @size
 * bytes, each starting with its uint8_t boot_id[16]: found, or appended
 * zeroed with that id (*@ret_new set).  NULL: no memory. */
void *fr_boot_slot(void **v, size_t *n, size_t size, const uint8_t boot_id[16], bool *ret_new);

/* Resolves "0" (the newest), "-N" (N before it) or a 32-digit boot id
 * against @boots.  Returns the index, -EINVAL for a malformed spec,
 * -ENOENT when the store has no such boot. */
int fr_boot_lookup(const struct fr_boot *boots, size_t n, const char *spec);

#endif
