/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bpf/event.h"
#include "../lib/macro.h"
#include "keyframe.h"

/* Reads up to @len bytes of /proc/PID/@name; returns the length or -errno. */
static ssize_t read_proc(int dfd, const char *name, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negative_errno();
	n = read(fd, buf, len);
	return n < 0 ? negative_errno() : n;
}

static uint64_t cgroup_id(int dfd, int mount_fd)
{
	char buf[4096], *line, *save = NULL;
	struct stat st;
	ssize_t n;

	if (mount_fd < 0)
		return 0;
	n = read_proc(dfd, "cgroup", buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the unified hierarchy's line is "0::/path" */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		const char *rel = line[4] ? line + 4 : ".";
		/* a cgroup2 directory's inode number is its cgroup id */
		if (fstatat(mount_fd, rel, &st, 0) == 0)
			return (uint64_t)st.st_ino;
	}
	return 0;
}

static void scan_one(int proc_fd, const char *name, int mount_fd, uint64_t ts, fr_keyframe_cb cb,
		     void *userdata)
{
	_cleanup_close_ int dfd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char stat[512], exe[4096], args[FR_ARGS_LEN];
	struct fr_record r = { .type = FR_REC_PROCESS, .ts = ts };
	ssize_t n;
	char *p;

	if (dfd < 0)
		return; /* gone already */
	r.pid = r.tid = (uint32_t)strtoul(name, NULL, 10);

	/* "pid (comm) S ppid ...": comm may hold spaces and parentheses */
	n = read_proc(dfd, "stat", stat, sizeof(stat) - 1);
	if (n <= 0)
		return;
	stat[n] = 0;
	p = strrchr(stat, ')');
	char *open = strchr(stat, '(');
	if (!p || !open || p < open)
		return;
	r.comm_len = (uint8_t)MIN((size_t)(p - open - 1), (size_t)FR_REC_COMM_MAX);
	memcpy(r.comm, open + 1, r.comm_len);
	r.comm[r.comm_len] = 0;
	if (sscanf(p + 1, " %*c %u", &r.process.ppid) != 1)
		return;

	n = readlinkat(dfd, "exe", exe, sizeof(exe));
	if (n > 0 && (size_t)n < sizeof(exe)) {
		/* kernel threads have none: an empty exe says so */
		r.process.exe = exe;
		r.process.exe_len = (uint32_t)n;
	} else
		r.process.exe = "";
	n = read_proc(dfd, "cmdline", args, sizeof(args));
	r.process.args = args;
	r.process.args_len = n > 0 ? (uint32_t)n : 0;
	while (r.process.args_len && args[r.process.args_len - 1] == 0)
		r.process.args_len--;
	r.cgroup_id = cgroup_id(dfd, mount_fd);
	cb(&r, userdata);
}

void fr_keyframe_attribute(int cgroup_mount_fd, uint32_t pid, struct fr_record *r)
{
	char path[32], comm[FR_REC_COMM_MAX + 2];
	_cleanup_close_ int dfd = -EBADF;
	ssize_t n;

	r->pid = r->tid = pid;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	n = read_proc(dfd, "comm", comm, sizeof(comm) - 1);
	if (n > 0) {
		while (n > 0 && comm[n - 1] == '\n')
			n--;
		r->comm_len = (uint8_t)MIN((size_t)n, (size_t)FR_REC_COMM_MAX);
		memcpy(r->comm, comm, r->comm_len);
		r->comm[r->comm_len] = 0;
	}
	r->cgroup_id = cgroup_id(dfd, cgroup_mount_fd);
}

int fr_keyframe_scan(int cgroup_mount_fd, uint64_t ts, fr_keyframe_cb cb, void *userdata)
{
	_cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	int count = 0;
	DIR *d;

	if (proc_fd < 0)
		return negative_errno();
	d = opendir("/proc");
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		scan_one(proc_fd, de->d_name, cgroup_mount_fd, ts, cb, userdata);
		count++;
	}
	closedir(d);
	return count;
}
