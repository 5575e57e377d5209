/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workloads for off-CPU stacks, built as distributions build programs
 * (-O2, no frame pointers: the user stack unwinds only with .eh_frame).
 *   fr-wait pipe MS
 *       main -> wait_for_input -> read() on a pipe no one writes to for MS
 *       milliseconds (a child writes a byte then); prints its pid.
 *   fr-wait fsync MB
 *       main -> write_durably -> fsync() of MB MiB written to a file in the
 *       current directory (removed after); prints its pid.
 * Each then lives 300 ms more, as a service would after a slow call: a
 * process that exits within microseconds of its wait's end is gone before
 * the daemon can read its mappings, and its user stack stays unnamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "fr-wait: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Blocks in read() until the byte arrives. */
__attribute__((noinline)) static int wait_for_input(int fd)
{
	char c;
	ssize_t n = read(fd, &c, 1);

	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return n == 1 ? 0 : -1;
}

__attribute__((noinline)) static int write_durably(const char *path, unsigned mb)
{
	static char buf[1 << 20];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), r;

	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	for (unsigned i = 0; i < mb; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -1;
		}
	r = fsync(fd);
	__asm__ volatile("" ::: "memory");
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "pipe") == 0) {
		int p[2], st;
		pid_t child;

		if (pipe(p) < 0)
			return fail("pipe");
		printf("%d\n", getpid());
		fflush(stdout);
		child = fork();
		if (child < 0)
			return fail("fork");
		if (child == 0) {
			usleep((useconds_t)atoi(argv[2]) * 1000);
			_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
		}
		if (wait_for_input(p[0]) < 0)
			return fail("read");
		usleep(300 * 1000);
		return waitpid(child, &st, 0) == child && st == 0 ? 0 : 1;
	}
	if (argc == 3 && strcmp(argv[1], "fsync") == 0) {
		const char *path = "fr-wait-fsync.tmp";
		int r;

		printf("%d\n", getpid());
		fflush(stdout);
		r = write_durably(path, (unsigned)atoi(argv[2]));
		unlink(path);
		usleep(300 * 1000);
		return r < 0 ? fail("write and fsync") : 0;
	}
	fprintf(stderr, "usage: fr-wait pipe MS | fr-wait fsync MB\n");
	return 2;
}
