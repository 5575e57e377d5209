/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc-access.h in flightrec-parse: each file asked of flightrecd over
 * the socket (parser-proto.h), which opens and checks it as
 * proc-access.c does, and sends the descriptor.  The helper's seccomp
 * filter leaves it no way to open anything itself.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "parser-proto.h"
#include "proc-access.h"

/* flightrec-parse maps it at its start (fr_access_broker_init()). */
static volatile struct fr_parse_crumb *crumb;

int fr_access_broker_init(void)
{
	void *p = mmap(NULL, FR_PARSE_CRUMB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, FR_PARSE_CRUMB_FD, 0);

	if (p == MAP_FAILED)
		return -errno;
	close(FR_PARSE_CRUMB_FD);
	crumb = p;
	return 0;
}

void fr_access_parsing(dev_t dev, uint64_t ino)
{
	if (crumb) {
		crumb->dev = dev;
		crumb->ino = ino;
	}
}

/* The daemon is gone, or said something this build does not: nothing to
 * do but leave (flightrecd starts another). */
static _Noreturn void lost(void)
{
	_exit(3);
}

static int need(struct fr_pm_need *n, const char *path, uint64_t *exe_ino)
{
	struct fr_pm_opened o;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov[2] = { { n, sizeof(*n) }, { (void *)path, n->path_len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = path ? 2 : 1 };
	struct cmsghdr *h;
	int fd = -EBADF;
	ssize_t k;

	n->type = FR_PM_NEED;
	if (sendmsg(FR_PARSE_FD, &m, MSG_NOSIGNAL) < 0)
		lost();
	iov[0] = (struct iovec){ &o, sizeof(o) };
	m = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	k = recvmsg(FR_PARSE_FD, &m, MSG_CMSG_CLOEXEC);
	if (k != (ssize_t)sizeof(o) || o.type != FR_PM_OPENED || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		lost();
	for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && h->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	if (o.result < 0) {
		if (fd >= 0)
			close(fd);
		return o.result;
	}
	if (fd < 0)
		lost();
	if (n->kind != FR_NEED_MAPS && n->kind != FR_NEED_PERF_MAP) {
		struct stat st;
		/* a binary or debug file: parsed from now on */
		if (fstat(fd, &st) == 0)
			fr_access_parsing(st.st_dev, st.st_ino);
	}
	if (exe_ino)
		*exe_ino = o.exe_ino;
	return fd;
}

int fr_access_maps(uint32_t pid, uint64_t *exe_ino)
{
	struct fr_pm_need n = { .kind = FR_NEED_MAPS, .pid = pid };

	return need(&n, NULL, exe_ino);
}

int fr_access_maps_gone(uint32_t pid, uint64_t *exe_ino)
{
	struct fr_pm_need n = { .kind = FR_NEED_MAPS_GONE, .pid = pid };

	return need(&n, NULL, exe_ino);
}

int fr_access_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino)
{
	struct fr_pm_need n = { .kind = FR_NEED_MAPPED, .pid = pid, .start = start, .end = end, .dev = dev, .ino = ino };
	size_t len = path ? strnlen(path, FR_PM_PATH_MAX) : 0;

	if (len == FR_PM_PATH_MAX)
		return -ENAMETOOLONG;
	n.path_len = (uint32_t)len;
	return need(&n, len ? path : NULL, NULL);
}

void fr_access_set_debug_dir(const char *dir)
{
	/* the daemon's: it opens them */
}

int fr_access_debug(const uint8_t *build_id, size_t len)
{
	struct fr_pm_need n = { .kind = FR_NEED_DEBUG };

	if (len == 0 || len > FR_BUILD_ID_MAX)
		return -EINVAL;
	memcpy(n.build_id, build_id, len);
	n.build_id_len = (uint32_t)len;
	return need(&n, NULL, NULL);
}

int fr_access_perf_map(uint32_t pid)
{
	struct fr_pm_need n = { .kind = FR_NEED_PERF_MAP, .pid = pid };

	return need(&n, NULL, NULL);
}
