/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "control.h"
#include "log.h"
#include "unix-socket.h"

/* A request is a small JSON object; anything larger is refused.  16 KiB
 * holds a 1024-byte mark even when JSON escaping multiplies it by six. */
#define REQUEST_MAX (16 << 10)

struct fr_control {
	int fd;
	char *path;
	sd_event_source *src;
	fr_control_handler h;
	void *userdata;
};

static void reply(int fd, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	(void)send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void reply_error(int fd, const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(msg));
	reply(fd, o);
	json_object_put(o);
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fr_control *c = userdata;
	_cleanup_close_ int cfd = -EBADF;
	char buf[REQUEST_MAX + 1];
	struct json_object *req, *resp;
	struct timeval tv = { .tv_sec = 1 };
	ssize_t n;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	/* a client that connects and says nothing must not stall the loop */
	(void)setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(cfd, buf, REQUEST_MAX + 1, 0);
	if (n <= 0)
		return 0;
	if (n > REQUEST_MAX) {
		reply_error(cfd, "request too large");
		return 0;
	}
	buf[n] = 0;
	req = json_tokener_parse(buf);
	if (!req || !json_object_is_type(req, json_type_object)) {
		json_object_put(req);
		reply_error(cfd, "malformed request: expected a JSON object");
		return 0;
	}
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t cl = sizeof(cred);
	(void)getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl);
	resp = c->h(req, &cred, c->userdata);
	json_object_put(req);
	if (!resp) {
		reply_error(cfd, "internal error");
		return 0;
	}
	reply(cfd, resp);
	json_object_put(resp);
	return 0;
}

int fr_control_new(sd_event *e, const char *path, fr_control_handler h, void *userdata,
		   struct fr_control **ret)
{
	struct fr_control *c = calloc(1, sizeof(*c));
	int k;

	if (!c)
		return -ENOMEM;
	c->h = h;
	c->userdata = userdata;
	c->path = strdup(path);
	c->fd = c->path ? fr_unix_socket_bind(path, SOCK_SEQPACKET, false) : -ENOMEM;
	if (c->fd < 0) {
		k = c->fd;
		goto fail;
	}
	k = sd_event_add_io(e, &c->src, c->fd, EPOLLIN, on_connection, c);
	if (k < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	fr_control_free(c);
	return k;
}

struct fr_control *fr_control_free(struct fr_control *c)
{
	if (!c)
		return NULL;
	sd_event_source_disable_unref(c->src);
	fr_unix_socket_close(c->fd, c->path);
	free(c->path);
	free(c);
	return NULL;
}
