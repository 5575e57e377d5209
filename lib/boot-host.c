/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boot-files.h"
#include "boot-host.h"
#include "macro.h"
#include "record-fields.h"

int fr_boot_host_current(struct fr_boot_host *h)
{
	_cleanup_close_ int fd = -EBADF;
	struct utsname u;
	char id[64];
	ssize_t n;

	*h = (struct fr_boot_host){};
	if (uname(&u) < 0)
		return negative_errno();
	snprintf(h->host, sizeof(h->host), "%s", u.nodename);
	snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	snprintf(h->version, sizeof(h->version), "%s", u.version);
	snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	n = fd < 0 ? -1 : read(fd, id, sizeof(id) - 1);
	if (n >= 32 && strspn(id, "0123456789abcdef") >= 32) {
		memcpy(h->machine_id, id, 32);
		h->machine_id[32] = 0;
	}
	return 0;
}

static void file_name(const uint8_t boot_id[16], char *buf, size_t len)
{
	char id[40];

	snprintf(buf, len, "%s/%s.json", FR_BOOT_HOST_DIR, fr_format_boot_id(boot_id, id, sizeof(id)));
}

struct json_object *fr_boot_host_json(const uint8_t boot_id[16], const struct fr_boot_host *h)
{
	struct json_object *o = json_object_new_object();
	char id[40];

	if (!o)
		return NULL;
	json_object_object_add(o, "boot_id", json_object_new_string(fr_format_boot_id(boot_id, id, sizeof(id))));
	json_object_object_add(o, "host", h ? json_object_new_string(h->host) : NULL);
	json_object_object_add(o, "kernel", h ? json_object_new_string(h->kernel) : NULL);
	json_object_object_add(o, "kernel_version", h ? json_object_new_string(h->version) : NULL);
	json_object_object_add(o, "machine", h ? json_object_new_string(h->machine) : NULL);
	json_object_object_add(o, "machine_id", h && *h->machine_id ? json_object_new_string(h->machine_id) : NULL);
	return o;
}

/* a string member of at most @len - 1 bytes, or "" */
static void get_string(struct json_object *o, const char *key, char *buf, size_t len)
{
	struct json_object *v;
	const char *s;

	*buf = 0;
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) &&
	    (s = json_object_get_string(v)) && strlen(s) < len)
		memcpy(buf, s, strlen(s) + 1);
}

int fr_boot_host_load(int dir_fd, const uint8_t boot_id[16], struct fr_boot_host *h)
{
	_cleanup_close_ int fd = -EBADF;
	struct json_object *o;
	char name[128], buf[FR_BOOT_HOST_MAX + 1];
	struct stat st;
	ssize_t n;

	file_name(boot_id, name, sizeof(name));
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode) || st.st_size > FR_BOOT_HOST_MAX)
		return -EBADMSG;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	o = json_tokener_parse(buf);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EBADMSG;
	}
	*h = (struct fr_boot_host){};
	get_string(o, "host", h->host, sizeof(h->host));
	get_string(o, "kernel", h->kernel, sizeof(h->kernel));
	get_string(o, "kernel_version", h->version, sizeof(h->version));
	get_string(o, "machine", h->machine, sizeof(h->machine));
	get_string(o, "machine_id", h->machine_id, sizeof(h->machine_id));
	json_object_put(o);
	return *h->host || *h->kernel ? 0 : -EBADMSG;
}

int fr_boot_host_save(int dir_fd, const uint8_t boot_id[16], const struct fr_boot_host *h)
{
	_cleanup_close_ int fd = -EBADF;
	struct fr_boot_host old;
	struct json_object *o;
	char name[128], tmp[160];
	const char *text;
	size_t len;
	int r = 0;

	if (fr_boot_host_load(dir_fd, boot_id, &old) == 0 && memcmp(&old, h, sizeof(old)) == 0)
		return 0;
	if (mkdirat(dir_fd, FR_BOOT_HOST_DIR, 0750) < 0 && errno != EEXIST)
		return negative_errno();
	o = fr_boot_host_json(boot_id, h);
	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(text);
	file_name(boot_id, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	/* a temporary file left by a crash, or put there: never written through */
	(void)unlinkat(dir_fd, tmp, 0);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		r = negative_errno();
	for (size_t off = 0; r == 0 && off < len;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			r = negative_errno();
		else if (n > 0)
			off += (size_t)n;
	}
	json_object_put(o);
	if (r == 0 && (fchmod(fd, 0640) < 0 || fsync(fd) < 0 || renameat(dir_fd, tmp, dir_fd, name) < 0))
		r = negative_errno();
	if (r < 0) {
		if (fd >= 0)
			(void)unlinkat(dir_fd, tmp, 0);
		return r;
	}
	fr_boot_host_prune(dir_fd, 0);
	return 1;
}

struct json_object *fr_boot_hosts_load(int dir_fd)
{
	_cleanup_close_ int fd = openat(dir_fd, FR_BOOT_HOST_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct json_object *all = json_object_new_object();
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if (!all || fd < 0 || !(d = fdopendir(fd)))
		return all;
	fd = -EBADF; /* owned by d */
	while ((de = readdir(d)) && n < 64) {
		struct fr_boot_host h;
		uint8_t id[16];
		char hex[40];
		unsigned v;
		int i;

		if (strlen(de->d_name) != 32 + strlen(".json") || strcmp(de->d_name + 32, ".json") != 0 ||
		    strspn(de->d_name, "0123456789abcdef") != 32)
			continue;
		for (i = 0; i < 16 && sscanf(de->d_name + 2 * i, "%2x", &v) == 1; i++)
			id[i] = (uint8_t)v;
		if (i < 16 || fr_boot_host_load(dir_fd, id, &h) < 0)
			continue;
		json_object_object_add(all, fr_format_boot_id(id, hex, sizeof(hex)), fr_boot_host_json(id, &h));
		n++;
	}
	closedir(d);
	return all;
}

void fr_boot_host_prune(int dir_fd, uint64_t oldest_wall_ns)
{
	fr_boot_files_prune(dir_fd, FR_BOOT_HOST_DIR, FR_BOOT_HOST_KEEP, oldest_wall_ns);
}

uint64_t fr_boot_host_disk_usage(int dir_fd)
{
	return fr_boot_files_disk_usage(dir_fd, FR_BOOT_HOST_DIR);
}
