/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "cgroup-names.h"

/* Bounded cache: when full it is emptied, cheaper than LRU and rare. */
#define CACHE_SIZE 4096
/* FILEID_KERNFS from include/linux/exportfs.h */
#define FILEID_KERNFS 0xfe

struct entry {
	uint64_t id;
	char *path; /* NULL: lookup failed */
	int used;
};

struct fr_cgroup_names {
	int mount_fd;
	size_t mount_len; /* length of the mount point prefix to strip */
	struct entry e[CACHE_SIZE];
	unsigned n;
};

int fr_cgroup_names_new(struct fr_cgroup_names **ret)
{
	struct fr_cgroup_names *c = calloc(1, sizeof(*c));
	struct mntent *m;
	FILE *f;

	if (!c)
		return -ENOMEM;
	c->mount_fd = -EBADF;
	f = setmntent("/proc/self/mounts", "re");
	if (f) {
		while ((m = getmntent(f))) {
			if (strcmp(m->mnt_type, "cgroup2") != 0)
				continue;
			c->mount_fd = open(m->mnt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			c->mount_len = strcmp(m->mnt_dir, "/") == 0 ? 0 : strlen(m->mnt_dir);
			break;
		}
		endmntent(f);
	}
	/* no cgroup2 mount: every lookup answers NULL, not an error */
	*ret = c;
	return 0;
}

struct fr_cgroup_names *fr_cgroup_names_free(struct fr_cgroup_names *c)
{
	if (!c)
		return NULL;
	for (unsigned i = 0; i < CACHE_SIZE; i++)
		free(c->e[i].path);
	closep(&c->mount_fd);
	free(c);
	return NULL;
}

static char *resolve(struct fr_cgroup_names *c, uint64_t id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS }, .id = id };
	char link[64], buf[4096];
	_cleanup_close_ int fd = -EBADF;
	ssize_t n;

	if (c->mount_fd < 0)
		return NULL;
	fd = open_by_handle_at(c->mount_fd, &h.fh, O_RDONLY | O_CLOEXEC | O_PATH);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0 || (size_t)n < c->mount_len)
		return NULL;
	buf[n] = 0;
	return strdup((size_t)n == c->mount_len ? "/" : buf + c->mount_len);
}

int fr_cgroup_names_mount_fd(const struct fr_cgroup_names *c)
{
	return c->mount_fd;
}

const char *fr_cgroup_names_lookup(struct fr_cgroup_names *c, uint64_t id)
{
	unsigned i = (unsigned)(id * 0x9E3779B97F4A7C15ULL >> 52) % CACHE_SIZE;

	/* open addressing, linear probe */
	for (unsigned k = 0; k < CACHE_SIZE; k++, i = (i + 1) % CACHE_SIZE) {
		if (!c->e[i].used)
			break;
		if (c->e[i].id == id)
			return c->e[i].path;
	}
	if (c->n >= CACHE_SIZE * 3 / 4) {
		for (unsigned k = 0; k < CACHE_SIZE; k++) {
			free(c->e[k].path);
			c->e[k] = (struct entry){};
		}
		c->n = 0;
		i = (unsigned)(id * 0x9E3779B97F4A7C15ULL >> 52) % CACHE_SIZE;
	}
	while (c->e[i].used)
		i = (i + 1) % CACHE_SIZE;
	c->e[i] = (struct entry){ .id = id, .path = resolve(c, id), .used = 1 };
	c->n++;
	return c->e[i].path;
}
