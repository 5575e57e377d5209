/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A record as JSON: one line of `frctl dump --format json` (JSON Lines), or
 * the same object as json-c's tree for JSON that embeds it.  The field
 * names are an API (DESIGN.md, frctl(1)). */
#ifndef FR_RECORD_JSON_H
#define FR_RECORD_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "out-buf.h"
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
	const struct fr_frame *waker_frames; /* an offcpu record's waker's, as frames */
	int waker_nframes;
};

/* Writes records as JSON text straight into an output buffer; json-c
 * escapes the strings that need it.  One per thread: it keeps json-c's
 * string and the last time stamp and boot id it formatted. */
struct fr_json_writer;

int fr_json_writer_new(struct fr_json_writer **ret);
struct fr_json_writer *fr_json_writer_free(struct fr_json_writer *w);

/* Appends @r as one JSON object and a newline; returns 0, or -ENOMEM
 * (the line is then incomplete). */
int fr_record_json_write(struct fr_json_writer *w, struct fr_out *o, const struct fr_record *r,
			 const struct fr_record_context *ctx);

/* The same object as json-c's tree (parsed from the line above); NULL when
 * out of memory. */
struct json_object *fr_record_to_json(const struct fr_record *r, const struct fr_record_context *ctx);

#endif
