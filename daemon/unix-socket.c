/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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
	int one = 1;

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
	if (chmod(path, mode) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

void fr_unix_socket_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	if (path)
		(void)unlink(path);
}
