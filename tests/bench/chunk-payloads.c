/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark helper: writes to stdout the zstd payloads of the chunks that
 * `frctl dump --since/--until` reads for a window (the window, the
 * keyframe before it and the context), concatenated: `zstd -d` on that is
 * the yardstick for decoding speed.
 *   chunk-payloads STORE SINCE_NS UNTIL_NS > payloads.zst
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store-format.h"
#include "store-reader.h"
#include "window.h"

int main(int argc, char **argv)
{
	struct fr_store_reader *r;
	struct fr_chunk_ref *refs;
	size_t n, bytes = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: chunk-payloads STORE SINCE_NS UNTIL_NS\n");
		return 2;
	}
	struct fr_window_query q = { .since_ns = strtoull(argv[2], NULL, 10), .until_ns = strtoull(argv[3], NULL, 10) };
	if (fr_store_reader_open(argv[1], &r) < 0 || fr_window_select(r, &q, &refs, &n) < 0) {
		fprintf(stderr, "chunk-payloads: cannot read %s\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t *buf;
		size_t len;
		if (fr_store_reader_read_chunk(r, &refs[i], &buf, &len) < 0)
			continue;
		fwrite(buf + sizeof(struct fr_chunk_header), 1, refs[i].info.payload_size, stdout);
		bytes += refs[i].info.payload_size;
		free(buf);
	}
	fprintf(stderr, "chunk-payloads: %zu chunks, %zu payload bytes\n", n, bytes);
	free(refs);
	fr_store_reader_free(r);
	return 0;
}
