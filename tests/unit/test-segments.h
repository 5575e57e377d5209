/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Finding a store's segment files from a test. */
#ifndef FR_TEST_SEGMENTS_H
#define FR_TEST_SEGMENTS_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "store.h"
#include "test.h"

/* The path of the segment with the highest sequence number among slots
 * [0, @nseg) of the store at @dir. */
static inline void test_newest_segment(const char *dir, int nseg, char *path, size_t len)
{
	uint64_t newest = 0;
	int newest_slot = -1;

	for (int i = 0; i < nseg; i++) {
		snprintf(path, len, "%s/segments/%04d.frs", dir, i);
		int fd = open(path, O_RDONLY);
		uint64_t s;
		if (fd >= 0 && fr_store_segment_header_read(fd, &s, NULL) == 0 && s >= newest) {
			newest = s;
			newest_slot = i;
		}
		if (fd >= 0)
			close(fd);
	}
	CHECK(newest_slot >= 0);
	snprintf(path, len, "%s/segments/%04d.frs", dir, newest_slot);
}

#endif
