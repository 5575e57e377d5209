/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A record as a JSON object: the field names are an API (DESIGN.md,
 * frctl(1)). */
#ifndef FR_RECORD_JSON_H
#define FR_RECORD_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

struct json_object;
struct fr_frame;

/* What a record's JSON needs beyond the record: its chunk's clock and
 * boot, and the names a reader resolved. */
struct fr_record_context {
	uint64_t wall_ns;
	const uint8_t *boot_id; /* 16 bytes */
	const char *cgroup;     /* NULL: unknown */
	uint32_t cgroup_len;
	const char *exe;        /* NULL: unknown */
	uint32_t exe_len;
	bool kernel_thread;
	const struct fr_frame *frames; /* samples: resolved frames; NULL: addresses only */
	int nframes;
};

struct json_object *fr_record_to_json(const struct fr_record *r, const struct fr_record_context *ctx);

#endif
