/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Walking the chunks of one segment file.  Chunks are found from their
 * headers; where a header does not verify (a bit flip, a torn or missing
 * write before a crash, ENOSPC), the walk scans forward in 8-byte steps for
 * the next header that does, so one damaged chunk costs only itself.
 * Shared by the reader and by the writer's crash recovery.
 */
#ifndef FR_SEGMENT_WALK_H
#define FR_SEGMENT_WALK_H

#include <stdint.h>

#include "chunk.h"

struct fr_segment_walk_stats {
	uint64_t bytes_read;
	uint64_t damaged;     /* damaged regions skipped (each one or more chunks) */
	uint64_t resumed;     /* of those, the ones a valid chunk follows: not a
				 torn tail but chunks lost inside the file */
	uint64_t unsupported; /* chunk headers of an unknown version or flag */
};

/* Called for every chunk whose header verifies, in file order.  A non-zero
 * return stops the walk and is returned. */
typedef int (*fr_segment_chunk_cb)(uint64_t offset, const struct fr_chunk_info *ci, void *userdata);

/* Walks fd's chunks from offset @start (after the segment or incident
 * header) up to @size bytes. */
int fr_segment_walk(int fd, uint64_t start, uint64_t size, fr_segment_chunk_cb cb, void *userdata,
		    struct fr_segment_walk_stats *st);

#endif
