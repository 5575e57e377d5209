/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "segment-walk.h"
#include "store-format.h"

/* Bytes read per step while scanning for the next chunk after damage. */
#define SCAN_BLOCK (64u << 10)

static int read_header(int fd, uint64_t off, struct fr_chunk_header *h,
		       struct fr_segment_walk_stats *st)
{
	ssize_t n = pread(fd, h, sizeof(*h), (off_t)off);

	if (n > 0)
		st->bytes_read += (uint64_t)n;
	if (n < 0)
		return negative_errno();
	return n == (ssize_t)sizeof(*h) ? 0 : -ENODATA;
}

/* Next 8-aligned offset >= @off holding a chunk magic, or @size. */
static uint64_t scan_magic(int fd, uint64_t off, uint64_t size, struct fr_segment_walk_stats *st)
{
	static _Thread_local uint8_t buf[SCAN_BLOCK];

	while (off + sizeof(struct fr_chunk_header) <= size) {
		size_t want = (size_t)MIN((uint64_t)SCAN_BLOCK, size - off);
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n <= 0)
			break;
		st->bytes_read += (uint64_t)n;
		for (size_t i = 0; i + FR_MAGIC_LEN <= (size_t)n; i += 8)
			if (memcmp(buf + i, FR_CHUNK_MAGIC, FR_MAGIC_LEN) == 0)
				return off + i;
		off += (uint64_t)n & ~(uint64_t)7;
		if ((size_t)n < want)
			break;
	}
	return size;
}

int fr_segment_walk(int fd, uint64_t start, uint64_t size, fr_segment_chunk_cb cb, void *userdata,
		    struct fr_segment_walk_stats *st)
{
	uint64_t off = start;
	bool in_damage = false;

	while (off + sizeof(struct fr_chunk_header) <= size) {
		struct fr_chunk_header h;
		struct fr_chunk_info ci;
		int k = read_header(fd, off, &h, st);

		if (k == -ENODATA)
			break;
		if (k < 0)
			return k;
		k = fr_chunk_header_parse(&h, &ci);
		if (k == 0 && off + fr_chunk_disk_size(&ci) > size)
			k = -EBADMSG; /* cut short */
		if (k == 0) {
			if (in_damage)
				st->resumed++;
			in_damage = false;
			k = cb(off, &ci, userdata);
			if (k != 0)
				return k;
			off += fr_chunk_disk_size(&ci);
			continue;
		}
		if (k == -EPROTONOSUPPORT)
			st->unsupported++;
		else if (!in_damage) {
			st->damaged++;
			in_damage = true;
		}
		off = scan_magic(fd, off + 8, size, st);
	}
	return 0;
}
