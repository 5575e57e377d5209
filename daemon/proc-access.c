/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/elf-names.h"
#include "../lib/macro.h"
#include "mapped-file.h"
#include "proc-access.h"

/* NULL: the default */
static char *debug_dir;
static fr_access_gone_maps_fn gone_maps;
static void *gone_maps_userdata;

void fr_access_set_gone_maps(fr_access_gone_maps_fn fn, void *userdata)
{
	gone_maps = fn;
	gone_maps_userdata = userdata;
}

int fr_access_maps_gone(uint32_t pid, uint64_t *exe_ino)
{
	return gone_maps ? gone_maps(gone_maps_userdata, pid, exe_ino) : -ESRCH;
}

int fr_access_maps(uint32_t pid, uint64_t *exe_ino)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", pid);
	if (stat(path, &st) < 0)
		return fr_access_maps_gone(pid, exe_ino);
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return fr_access_maps_gone(pid, exe_ino);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	*exe_ino = (uint64_t)st.st_ino;
	return fd;
}

int fr_access_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, dev_t dev, uint64_t ino)
{
	return fr_open_mapped_file(pid, start, end, path, dev, ino);
}

void fr_access_set_debug_dir(const char *dir)
{
	free(debug_dir);
	debug_dir = dir && *dir ? strdup(dir) : NULL;
}

int fr_access_debug(const uint8_t *build_id, size_t len)
{
	return fr_debug_file_open(debug_dir ? debug_dir : FR_DEBUG_DIR_DEFAULT, build_id, len);
}

static bool absent(int err)
{
	return err == ENOENT || err == ESRCH || err == ENOTDIR;
}

/* The mount @fd is on: statx's, else /proc/self/fdinfo's (kernels
 * before 5.8).  0 if unknown. */
static uint64_t mount_id(int fd)
{
	struct statx sx;
	char path[64], line[128];
	unsigned long long id = 0;
	FILE *f;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
		return sx.stx_mnt_id;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %llu", &id) == 1)
			break;
	if (f)
		fclose(f);
	return id;
}

/* The real and effective uids of the process whose /proc dir is @dfd. */
static int proc_uids(int dfd, uid_t *ruid, uid_t *euid)
{
	_cleanup_close_ int fd = openat(dfd, "status", O_RDONLY | O_CLOEXEC);
	char buf[4096], *l;
	unsigned r, e;
	ssize_t n;

	if (fd < 0)
		return negative_errno();
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	l = strstr(buf, "\nUid:");
	if (!l || sscanf(l, "\nUid: %u %u", &r, &e) != 2)
		return -ESRCH;
	*ruid = r;
	*euid = e;
	return 0;
}

/* The /proc/PID directory is opened first and the files below it, so
 * the owner compared is that of the same process. */
int fr_access_perf_map(uint32_t pid)
{
	_cleanup_close_ int dfd = -EBADF, tfd = -EBADF, fd = -EBADF;
	struct stat st;
	uid_t ruid, euid;
	uint64_t tmp_mnt;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%" PRIu32, pid);
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return absent(errno) ? -ENOENT : negative_errno();
	r = proc_uids(dfd, &ruid, &euid);
	if (r < 0)
		return absent(-r) ? -ENOENT : r;
	/* the process's /tmp, and the file looked up in that very directory */
	tfd = openat(dfd, "root/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return absent(errno) ? -ENOENT : negative_errno();
	tmp_mnt = mount_id(tfd);
	snprintf(path, sizeof(path), "perf-%" PRIu32 ".map", pid);
	fd = openat(tfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return absent(errno) ? -ENOENT : errno == ELOOP ? -EPERM : negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	/* a regular file its process's user wrote (root's only for root's
	 * processes: a user namespace's root is not), no one else may append
	 * to, on the process's own /tmp mount */
	if (!S_ISREG(st.st_mode) || (st.st_uid != ruid && st.st_uid != euid) || (st.st_mode & S_IWOTH) || !tmp_mnt ||
	    mount_id(fd) != tmp_mnt)
		return -EPERM;
	return TAKE_FD(fd);
}

void fr_access_parsing(dev_t dev, uint64_t ino)
{
}
