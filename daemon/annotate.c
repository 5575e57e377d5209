/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "annotate.h"
#include "unix-socket.h"

struct fr_annotate {
	int fd;
	char *path;
	sd_event_source *src;
	fr_annotate_cb cb;
	void *userdata;
};

static int on_datagram(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fr_annotate *a = userdata;
	char buf[FR_ANNOTATION_MAX + 16];
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = FR_ANNOTATION_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
			     .msg_controllen = sizeof(control) };
	uint32_t pid = 0;
	ssize_t n;

	/* drain what is queued, a bounded number per wakeup */
	for (int i = 0; i < 64; i++) {
		mh.msg_controllen = sizeof(control);
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			break;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred cred;
				memcpy(&cred, CMSG_DATA(c), sizeof(cred));
				pid = (uint32_t)cred.pid;
			}
		size_t len = (size_t)n;
		if (mh.msg_flags & MSG_TRUNC) {
			/* cut, and say so */
			static const char cut[] = " [cut]";
			len = FR_ANNOTATION_MAX - sizeof(cut) + 1;
			memcpy(buf + len, cut, sizeof(cut) - 1);
			len += sizeof(cut) - 1;
		}
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			len--;
		if (len)
			a->cb(pid, buf, len, a->userdata);
	}
	return 0;
}

int fr_annotate_new(sd_event *e, const char *path, fr_annotate_cb cb, void *userdata,
		    struct fr_annotate **ret)
{
	struct fr_annotate *a = calloc(1, sizeof(*a));
	int k;

	if (!a)
		return -ENOMEM;
	a->cb = cb;
	a->userdata = userdata;
	a->path = strdup(path);
	/* any local process may annotate; every mark names its sender */
	a->fd = a->path ? fr_unix_socket_bind(path, SOCK_DGRAM, true) : -ENOMEM;
	if (a->fd < 0) {
		k = a->fd;
		goto fail;
	}
	k = sd_event_add_io(e, &a->src, a->fd, EPOLLIN, on_datagram, a);
	if (k < 0)
		goto fail;
	*ret = a;
	return 0;
fail:
	fr_annotate_free(a);
	return k;
}

struct fr_annotate *fr_annotate_free(struct fr_annotate *a)
{
	if (!a)
		return NULL;
	sd_event_source_disable_unref(a->src);
	fr_unix_socket_close(a->fd, a->path);
	free(a->path);
	free(a);
	return NULL;
}
