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

/* Whether @pid, still running as @uid/@gid (its real ids, as
 * SCM_CREDENTIALS gives them), has supplementary group @want, from
 * /proc/PID/status (a line of any length: NGROUPS_MAX is 65536).  A sender
 * that exited before we look, or changed its ids, is refused: failing
 * closed. */
static bool sender_in_group(pid_t pid, uid_t uid, gid_t gid, gid_t want)
{
	char path[64];
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool uid_ok = false, gid_ok = false, member = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		unsigned long v;
		char *p, *end;
		if (sscanf(line, "Uid: %lu", &v) == 1)
			uid_ok = v == uid;
		else if (sscanf(line, "Gid: %lu", &v) == 1)
			gid_ok = v == gid;
		else if (strncmp(line, "Groups:", 7) == 0)
			for (p = line + 7;; p = end) {
				v = strtoul(p, &end, 10);
				if (end == p)
					break;
				member |= v == want;
			}
	}
	fclose(f);
	return uid_ok && gid_ok && member;
}

static bool sender_privileged(struct fr_annotate *a, const struct ucred *cred)
{
	gid_t want;

	if (fr_control_privileged(a->ctl, cred->uid, cred->gid, NULL, 0))
		return true;
	if (!fr_control_group(a->ctl, &want))
		return false;
	return sender_in_group(cred->pid, cred->uid, cred->gid, want);
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
		/* no credentials (cannot happen with SO_PASSCRED): nobody */
		struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(cred)))
				memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		if (!sender_privileged(a, &cred)) {
			struct fr_control_peer peer = { .pid = cred.pid, .uid = cred.uid, .gid = cred.gid };
			a->st.denied++;
			json_object_put(fr_control_deny(a->ctl, &peer, "an annotation"));
			continue;
		}
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
	/* any local process may send; root and control.group are heard,
	 * and every mark names its sender */
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

void fr_annotate_get_stats(const struct fr_annotate *a, struct fr_annotate_stats *ret)
{
	*ret = a->st;
}
