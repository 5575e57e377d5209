/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot-files.h"
#include "macro.h"

/* at most this many files of a directory are looked at: the store's own
 * files, a few per boot (FR_KSYMS_KEEP and the like) */
#define BOOT_FILES_MAX 64

struct boot_file {
	char name[64];
	struct timespec t;
};

static int cmp_newest(const void *a, const void *b)
{
	const struct boot_file *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec > y->t.tv_sec ? -1 : 1;
	return x->t.tv_nsec > y->t.tv_nsec ? -1 : x->t.tv_nsec < y->t.tv_nsec;
}

void fr_boot_files_prune(int dir_fd, const char *subdir, unsigned keep, uint64_t oldest_wall_ns)
{
	_cleanup_close_ int fd = openat(dir_fd, subdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct boot_file v[BOOT_FILES_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd)))
		return;
	fd = -EBADF; /* owned by d */
	while ((de = readdir(d)) && n < ELEMENTSOF(v)) {
		struct stat st;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(v[0].name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n++].t = st.st_mtim;
	}
	qsort(v, n, sizeof(v[0]), cmp_newest);
	/* a boot's chunks were all written before the next boot saved its
	 * file: when that is older than the oldest segment, none of them is
	 * left */
	for (size_t i = 1; i < n; i++) {
		uint64_t next_saved = (uint64_t)v[i - 1].t.tv_sec * 1000000000ULL + (uint64_t)v[i - 1].t.tv_nsec;
		if (i >= keep || (oldest_wall_ns && next_saved <= oldest_wall_ns))
			(void)unlinkat(dirfd(d), v[i].name, 0);
	}
	closedir(d);
}

uint64_t fr_boot_files_disk_usage(int dir_fd, const char *subdir)
{
	_cleanup_close_ int fd = openat(dir_fd, subdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	uint64_t sum = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd)))
		return 0;
	fd = -EBADF;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	return sum;
}
