/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One request, one reply, over the daemon's SOCK_SEQPACKET control socket. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "control-client.h"

/* Replies are a status object: a few KiB per CPU at most. */
#define REPLY_MAX (1 << 20)

int fr_control_call(const char *path, struct json_object *req, struct json_object **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct timeval tv = { .tv_sec = 5 };
	const char *s;
	ssize_t n;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) < 0)
		return negative_errno();
	buf = malloc(REPLY_MAX + 1);
	if (!buf)
		return -ENOMEM;
	n = recv(fd, buf, REPLY_MAX, 0);
	if (n < 0)
		return negative_errno();
	if (n == 0)
		return -ECONNRESET;
	buf[n] = 0;
	*ret = json_tokener_parse(buf);
	return *ret ? 0 : -EBADMSG;
}
