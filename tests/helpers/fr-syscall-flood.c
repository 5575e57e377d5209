/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload: a flood of slow-enough system calls.  THREADS threads each
 * read 64 KiB from /dev/zero in a loop for SECONDS seconds: a few µs of
 * CPU per call and no sleeping, so with the syscall source's threshold at
 * 1 µs every call is a record, hundreds of thousands per second per busy
 * thread, more than a consumer can keep up with.  The process is named
 * "fr-flood" so tests can pick its records out of a system-wide store.
 * Prints the number of calls made.
 *   fr-syscall-flood THREADS SECONDS
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_ulong calls;
static struct timespec until;

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static int zero_fd;

static void *flood(void *arg)
{
	static char buf[64 << 10]; /* shared: nobody reads it */
	struct timespec now;
	unsigned long n = 0;

	(void)arg;
	do {
		for (int i = 0; i < 64; i++)
			if (pread(zero_fd, buf, sizeof(buf), 0) < 0)
				return NULL;
		n += 64;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (before(&now, &until));
	atomic_fetch_add(&calls, n);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	double seconds = argc == 3 ? strtod(argv[2], NULL) : 0;
	pthread_t *t;

	if (threads <= 0 || threads > 1024 || seconds <= 0) {
		fprintf(stderr, "usage: fr-syscall-flood THREADS SECONDS\n");
		return 2;
	}
	prctl(PR_SET_NAME, "fr-flood");
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)seconds;
	until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	t = calloc((size_t)threads, sizeof(*t));
	if (!t)
		return 1;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, flood, NULL) != 0)
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", atomic_load(&calls));
	free(t);
	return 0;
}
