/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark workload: context switches at a set rate, paced against
 * CLOCK_MONOTONIC in 1 ms steps so the rate holds for the whole run instead
 * of bursting.  Pin it to one CPU with taskset: both kinds make their
 * switches between two tasks sharing that CPU.
 *   pipe   two processes ping-pong one byte over a pair of pipes: two
 *          switches per round trip, each with a wakeup, as a request/reply
 *          workload makes them (four syscalls per round trip)
 *   yield  two threads call sched_yield(): one syscall per switch and no
 *          wakeup, the cheapest switch the kernel makes, for the highest
 *          rates a CPU can produce
 * Prints the switches per second achieved (lower than asked when the CPU
 * cannot keep up); in yield mode these are the switches the kernel counted
 * away from the two threads (getrusage), not the calls.
 *   switch-gen [--yield] RATE_PER_S SECONDS */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_1ms(void)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	nanosleep(&ms, NULL);
}

/* steps owed at time t for a pace of `per_s` steps per second */
static uint64_t owed(int64_t start, int64_t t, double per_s)
{
	return (uint64_t)((double)(t - start) * per_s / 1e9);
}

static int run_pipe(double rate, int64_t start, int64_t end, double *switches)
{
	int to_child[2], to_parent[2];
	uint64_t trips = 0;
	char c = 0;
	int64_t t;
	pid_t pid;

	if (pipe(to_child) < 0 || pipe(to_parent) < 0) {
		perror("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* echo every byte until the parent closes its end */
		close(to_child[1]);
		close(to_parent[0]);
		while (read(to_child[0], &c, 1) == 1)
			if (write(to_parent[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	while ((t = now_ns()) < end) {
		/* two switches per round trip */
		uint64_t due = owed(start, t, rate / 2);

		while (trips < due) {
			if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1) {
				perror("pipe round trip");
				kill(pid, SIGKILL);
				return 1;
			}
			trips++;
			if ((trips & 63) == 0 && now_ns() >= end)
				break;
		}
		if (trips >= due)
			sleep_1ms();
	}
	close(to_child[1]);
	waitpid(pid, NULL, 0);
	*switches = (double)trips * 2;
	return 0;
}

struct yielder {
	pthread_t thread;
	double rate; /* this thread's share: half the switches */
	int64_t start, end;
	long switches;
};

static void *yielder_main(void *arg)
{
	struct yielder *y = arg;
	uint64_t calls = 0;
	struct rusage ru;
	int64_t t;

	while ((t = now_ns()) < y->end) {
		uint64_t due = owed(y->start, t, y->rate);

		while (calls < due) {
			sched_yield();
			calls++;
			if ((calls & 63) == 0 && now_ns() >= y->end)
				break;
		}
		if (calls >= due)
			sleep_1ms();
	}
	getrusage(RUSAGE_THREAD, &ru);
	y->switches = ru.ru_nvcsw + ru.ru_nivcsw;
	return NULL;
}

static int run_yield(double rate, int64_t start, int64_t end, double *switches)
{
	struct yielder y[2];
	int i, r;

	for (i = 0; i < 2; i++) {
		y[i] = (struct yielder){ .rate = rate / 2, .start = start, .end = end };
		r = pthread_create(&y[i].thread, NULL, yielder_main, &y[i]);
		if (r != 0) {
			fprintf(stderr, "pthread_create: %s\n", strerror(r));
			return 1;
		}
	}
	*switches = 0;
	for (i = 0; i < 2; i++) {
		pthread_join(y[i].thread, NULL);
		*switches += (double)y[i].switches;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int yield = argc > 1 && strcmp(argv[1], "--yield") == 0;
	double rate = argc > 1 + yield ? strtod(argv[1 + yield], NULL) : 100000;
	double secs = argc > 2 + yield ? strtod(argv[2 + yield], NULL) : 10;
	double switches;
	int64_t start, end;
	int r;

	if (rate <= 0 || secs <= 0) {
		fprintf(stderr, "usage: switch-gen [--yield] RATE_PER_S SECONDS\n");
		return 2;
	}
	start = now_ns();
	end = start + (int64_t)(secs * 1e9);
	r = yield ? run_yield(rate, start, end, &switches) : run_pipe(rate, start, end, &switches);
	if (r != 0)
		return r;
	printf("%.0f\n", switches * 1e9 / (double)(now_ns() - start));
	return 0;
}
