/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped-file.h"

int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino)
{
	char buf[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(buf, sizeof(buf), "/proc/%u/root%s", pid, path);
		fd = open(i == 0 ? buf : path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_dev == dev && (uint64_t)st.st_ino == ino)
			return fd;
		close(fd);
	}
	return -ENOENT;
}
