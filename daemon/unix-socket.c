/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "unix-socket.h"

int fr_unix_socket_bind(const char *path, int type, bool passcred, mode_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;
	int one = 1, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	strcpy(sa.sun_path, path);
	/* the store lock guarantees one daemon per store: a socket file left
	 * by a killed daemon is stale */
	(void)unlink(path);
	if (passcred && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return negative_errno();
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	if (type == SOCK_SEQPACKET && listen(fd, 16) < 0)
		return negative_errno();
	r = fr_unix_socket_set_owner(path, geteuid(), getegid(), mode);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

int fr_unix_socket_set_owner(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	char proc[64];
	struct stat st;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISSOCK(st.st_mode) || (st.st_uid != geteuid() && st.st_uid != uid))
		return -EPERM;
	if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return negative_errno();
	/* chmod of an O_PATH descriptor: through its /proc link, which is
	 * the file itself, not a path looked up again */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (chmod(proc, mode) < 0)
		return negative_errno();
	return 0;
}

int fr_unix_socket_check_dir(const char *path, char *why, size_t len)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;
	struct stat st;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0; /* the store's, made by us; bind() says the rest */
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, len, "%s is owned by uid %u, not by root or the daemon (uid %u)", dir,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, len, "%s is writable by its group or others and not sticky (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

void fr_unix_socket_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	if (path)
		(void)unlink(path);
}
