/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "proc-stat.h"

int fr_proc_stat_read(uint32_t pid, struct fr_proc_stat *st)
{
	char path[32], buf[512], *open_paren, *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	buf[n] = 0;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %" SCNu64 " %" SCNu64, &st->state,
		   &st->utime, &st->stime) != 3)
		return -EBADMSG;
	snprintf(st->comm, sizeof(st->comm), "%.*s", (int)MIN((size_t)(close_paren - open_paren - 1), (size_t)16),
		 open_paren + 1);
	return 0;
}
