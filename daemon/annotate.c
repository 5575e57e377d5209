/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "annotate.h"
#include "control.h"
#include "log.h"
#include "unix-socket.h"

struct fr_annotate {
	int fd;
	char *path;
	sd_event_source *src;
	struct fr_control *ctl;
	fr_annotate_cb cb;
	void *userdata;
	struct fr_annotate_stats st;
};

/* Who may send is decided by the kernel, on the socket file: owned by
 * root, group control.group, mode 0660 (0600 with no such group).  A
 * sendto() checks every group of the sender, supplementary ones included,
 * at the moment it sends; others get EACCES from their own call, an error
 * they see rather than a datagram dropped in silence. */
int fr_annotate_apply_group(struct fr_annotate *a)
{
	gid_t gid;
	bool have = fr_control_group(a->ctl, &gid);

	/* chown before chmod: until both are done the file keeps the mode
	 * bind() gave it under the daemon's umask, which is no wider */
	return fr_unix_socket_set_owner(a->path, 0, have ? gid : 0, have ? 0660 : 0600);
}

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
	ssize_t n;

	/* drain what is queued, a bounded number per wakeup */
	for (int i = 0; i < 64; i++) {
		mh.msg_controllen = sizeof(control);
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			break;
		/* the sender, for the mark (the file's permissions let it send) */
		struct ucred cred = { .pid = 0 };
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(cred)))
				memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		size_t len = (size_t)n;
		if (mh.msg_flags & MSG_TRUNC) {
			/* cut, and say so: in the text, the count and the log */
			static const char cut[] = " [cut]";
			len = FR_ANNOTATION_MAX - sizeof(cut) + 1;
			memcpy(buf + len, cut, sizeof(cut) - 1);
			len += sizeof(cut) - 1;
			a->st.cut++;
			if (a->st.cut == 1 || a->st.cut % 100 == 0)
				log_notice("Annotation from pid %d longer than %d bytes: cut; %" PRIu64 " cut so far.",
					   (int)cred.pid, FR_ANNOTATION_MAX, a->st.cut);
		}
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			len--;
		if (len) {
			a->st.received++;
			a->cb((uint32_t)cred.pid, buf, len, a->userdata);
		}
	}
	return 0;
}

int fr_annotate_new(sd_event *e, const char *path, struct fr_control *ctl, fr_annotate_cb cb, void *userdata,
		    struct fr_annotate **ret)
{
	struct fr_annotate *a = calloc(1, sizeof(*a));
	int k;

	if (!a)
		return -ENOMEM;
	a->ctl = ctl;
	a->cb = cb;
	a->userdata = userdata;
	a->path = strdup(path);
	/* root and control.group may send, and every mark names its sender */
	a->fd = a->path ? fr_unix_socket_bind(path, SOCK_DGRAM, true, 0600) : -ENOMEM;
	if (a->fd < 0) {
		k = a->fd;
		goto fail;
	}
	/* failing that the file stays 0600: root only */
	k = fr_annotate_apply_group(a);
	if (k < 0)
		log_warning_errno(k, "Failed to give the annotation socket %s to its group: %m; only root may annotate.",
				  path);
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

void fr_annotate_get_stats(const struct fr_annotate *a, struct fr_annotate_stats *ret)
{
	*ret = a->st;
}
