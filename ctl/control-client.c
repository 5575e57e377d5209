/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One request, one reply, over the daemon's SOCK_SEQPACKET control socket. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "control-client.h"
#include "frctl-error.h"
#include "frctl.h"
#include "paths.h"

/* Replies are a status object: a few KiB per CPU at most. */
#define REPLY_MAX (1 << 20)

int frctl_request(struct frctl *f, struct json_object *req, const char *what, bool down_ok,
		  struct json_object **resp)
{
	_cleanup_free_ char *sock = NULL;
	struct json_object *err;
	int k;

	*resp = NULL;
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	sock = frctl_socket_path(f);
	if (!sock)
		return EXIT_FAILURE_;
	k = fr_control_call(sock, req, resp);
	if (k < 0 && down_ok)
		return k;
	if (k == -ENOENT || k == -ECONNREFUSED) {
		frctl_error("flightrecd is not running (no daemon on %s)", sock);
		return EXIT_FAILURE_;
	}
	if (k == -EACCES || k == -EPERM) {
		frctl_error("%s: permission denied: cannot connect to %s", what, sock);
		return EXIT_DENIED;
	}
	if (k < 0) {
		frctl_error("cannot reach flightrecd on %s: %s", sock, strerror(-k));
		return EXIT_FAILURE_;
	}
	if (json_object_object_get_ex(*resp, "denied", &err) && json_object_get_boolean(err)) {
		json_object_object_get_ex(*resp, "error", &err);
		frctl_error("%s: %s", what, json_object_get_string(err));
		json_object_put(*resp);
		*resp = NULL;
		return EXIT_DENIED;
	}
	if (!down_ok && json_object_object_get_ex(*resp, "error", &err)) {
		frctl_error("flightrecd refused the %s: %s", what, json_object_get_string(err));
		json_object_put(*resp);
		*resp = NULL;
		return EXIT_FAILURE_;
	}
	return 0;
}

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
