/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "mapped-file.h"

/* @path opened only if it is (still) the regular file @dev, @ino: first
 * as O_PATH, which neither opens a device nor waits on a FIFO, then,
 * checked, for reading through that descriptor (the same inode, whatever
 * was renamed since). */
static int open_checked(const char *path, dev_t dev, uint64_t ino)
{
	_cleanup_close_ int pfd = open(path, O_PATH | O_CLOEXEC);
	char self[64];
	struct stat st;
	int fd;

	if (pfd < 0)
		return -ENOENT;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != dev || (uint64_t)st.st_ino != ino)
		return -ESTALE;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd < 0 ? -ENOENT : fd;
}

int fr_open_mapped_file(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino)
{
	char buf[96];
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	fd = open_checked(buf, dev, ino);
	if (fd != -ENOENT || !path || path[0] != '/')
		return fd;
	/* the process gone (a short-lived one, a crash), its leader exited,
	 * or the range unmapped: the path it was mapped from, in the
	 * daemon's namespace, if it still names that very file */
	return open_checked(path, dev, ino);
}
