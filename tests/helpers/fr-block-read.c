/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload: blocks in read(2) on a pipe for about MS milliseconds (a
 * child writes after sleeping) and prints what it measured, so a test can
 * compare the recorded syscall duration with the real wait.
 *   fr-block-read MARKER MS   ->   {"pid":N,"tid":N,"waited_ns":M}
 * MARKER is only there to make this exec's argv unique.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int fd[2];
	char c;
	pid_t child;
	uint64_t t0, t1;
	long ms;

	if (argc != 3 || (ms = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: fr-block-read MARKER MS\n");
		return 2;
	}
	if (pipe(fd) < 0)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&d, NULL);
		(void)!write(fd[1], "x", 1);
		_exit(0);
	}
	t0 = mono();
	if (read(fd[0], &c, 1) != 1)
		return 1;
	t1 = mono();
	waitpid(child, NULL, 0);
	printf("{\"pid\":%d,\"tid\":%d,\"waited_ns\":%llu}\n", getpid(), gettid(),
	       (unsigned long long)(t1 - t0));
	return 0;
}
