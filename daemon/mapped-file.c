/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped-file.h"

int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, dev_t dev, uint64_t ino)
{
	char buf[96];
	struct stat st;
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	/* O_NONBLOCK, O_NOCTTY: whatever is there now, opening it must not
	 * wait (a FIFO) nor take a terminal */
	fd = open(buf, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != dev || (uint64_t)st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}
