/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark workload: THREADS threads each sleep MS milliseconds N times
 * (off-CPU waits of a known length and number).  Prints
 * "WAITS CPU_NS": the waits made and the CPU time the process used, user
 * and system (what task-side work per wait, such as copying a stack as a
 * thread returns to user space, adds to).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static long n;
static long ms;

static void *waiter(void *arg)
{
	struct timespec d = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	for (long i = 0; i < n; i++)
		nanosleep(&d, NULL);
	return arg;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
	pthread_t t[256];
	struct rusage ru;

	n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	ms = argc > 3 ? strtol(argv[3], NULL, 10) : 2;
	if (threads < 1 || threads > 256 || n < 1 || ms < 0) {
		fprintf(stderr, "usage: waits [THREADS<=256 [N [MS]]]\n");
		return 2;
	}
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, waiter, NULL) != 0)
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("%ld %.0f\n", threads * n,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3);
	return 0;
}
