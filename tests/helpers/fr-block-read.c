/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload: blocks in read(2) on a pipe for about MS milliseconds (a
 * child writes after sleeping) and prints what it measured, so a test can
 * compare the recorded syscall duration with the real wait, and the
 * recorded times with when the read started and ended (CLOCK_REALTIME).
 *   fr-block-read MARKER MS
 *     ->   {"pid":N,"tid":N,"waited_ns":M,"read_start_ns":S,"read_end_ns":E}
 * MARKER is only there to make this exec's argv unique.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int fd[2];
	char c;
	pid_t child;
	uint64_t t0, t1, r0, r1;
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
	r0 = now(CLOCK_REALTIME);
	t0 = now(CLOCK_MONOTONIC);
	if (read(fd[0], &c, 1) != 1)
		return 1;
	t1 = now(CLOCK_MONOTONIC);
	r1 = now(CLOCK_REALTIME);
	waitpid(child, NULL, 0);
	printf("{\"pid\":%d,\"tid\":%d,\"waited_ns\":%llu,\"read_start_ns\":%llu,\"read_end_ns\":%llu}\n",
	       getpid(), gettid(), (unsigned long long)(t1 - t0), (unsigned long long)r0, (unsigned long long)r1);
	return 0;
}
