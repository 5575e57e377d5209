/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdbool.h>
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
	int memcg_fd;     /* v1 memory hierarchy, -1 without one */
	size_t memcg_len;
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
	c->mount_fd = c->memcg_fd = -EBADF;
	f = setmntent("/proc/self/mounts", "re");
	if (f) {
		while ((m = getmntent(f))) {
			if (strcmp(m->mnt_type, "cgroup2") == 0 && c->mount_fd < 0) {
				c->mount_fd = open(m->mnt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				c->mount_len = strcmp(m->mnt_dir, "/") == 0 ? 0 : strlen(m->mnt_dir);
			} else if (strcmp(m->mnt_type, "cgroup") == 0 && hasmntopt(m, "memory") && c->memcg_fd < 0) {
				c->memcg_fd = open(m->mnt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				c->memcg_len = strlen(m->mnt_dir);
			}
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
	closep(&c->memcg_fd);
	free(c);
	return NULL;
}

/* Opens kernfs node @id on the cgroup mount @mount_fd and returns its path
 * below the mount (of @prefix_len bytes) in @buf. */
static const char *resolve_on(int mount_fd, size_t prefix_len, uint64_t id, char *buf, size_t len)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS }, .id = id };
	_cleanup_close_ int fd = -EBADF;
	char link[64];
	ssize_t n;

	if (mount_fd < 0)
		return NULL;
	fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_CLOEXEC | O_PATH);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0 || (size_t)n < prefix_len)
		return NULL;
	buf[n] = 0;
	if ((size_t)n == prefix_len)
		return "/";
	return buf + prefix_len;
}

/* Depth-first search below @dfd for the directory whose inode number is
 * @ino (a kernfs directory's inode number is its id).  Cgroup trees are
 * small; this runs only for OOM kills. */
static bool find_ino(int dfd, uint64_t ino, char *path, size_t len, size_t used, int depth)
{
	DIR *d;
	struct dirent *de;
	bool found = false;
	int fd;

	if (depth > 16 || (fd = dup(dfd)) < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		int n;
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		n = snprintf(path + used, len - used, "/%s", de->d_name);
		if (n < 0 || (size_t)n >= len - used)
			continue;
		if (de->d_ino == ino) {
			found = true;
			break;
		}
		_cleanup_close_ int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub >= 0)
			found = find_ino(sub, ino, path, len, used + (size_t)n, depth + 1);
	}
	closedir(d);
	if (!found)
		path[used] = 0;
	return found;
}

const char *fr_cgroup_names_memcg(struct fr_cgroup_names *c, uint64_t id, char *buf, size_t len)
{
	int fd = c->memcg_fd >= 0 ? c->memcg_fd : c->mount_fd;
	const char *p;

	p = resolve_on(fd, c->memcg_fd >= 0 ? c->memcg_len : c->mount_len, id, buf, len);
	if (p || fd < 0)
		return p;
	/* cgroup v1 hierarchies do not take file handles on every kernel */
	buf[0] = 0;
	if (find_ino(fd, id, buf, len, 0, 0))
		return buf;
	return NULL;
}

static char *resolve(struct fr_cgroup_names *c, uint64_t id)
{
	char buf[4096];
	const char *p = resolve_on(c->mount_fd, c->mount_len, id, buf, sizeof(buf));

	return p ? strdup(p) : NULL;
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
