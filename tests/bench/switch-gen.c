/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark workload: context switches at a set rate.  Two processes
 * ping-pong one byte over a pair of pipes (two switches per round trip when
 * both sit on one CPU: pin them with taskset).  The parent paces the round
 * trips against CLOCK_MONOTONIC in 1 ms steps, so the rate holds for the
 * whole run instead of bursting.  Prints the switches per second it
 * achieved (lower than asked when the CPU cannot keep up).
 *   switch-gen RATE_PER_S SECONDS */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? strtod(argv[1], NULL) : 100000;
	double secs = argc > 2 ? strtod(argv[2], NULL) : 10;
	int to_child[2], to_parent[2];
	int64_t start, end, t;
	uint64_t trips = 0;
	char c = 0;
	pid_t pid;

	if (rate <= 0 || secs <= 0) {
		fprintf(stderr, "usage: switch-gen RATE_PER_S SECONDS\n");
		return 2;
	}
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
	start = now_ns();
	end = start + (int64_t)(secs * 1e9);
	while ((t = now_ns()) < end) {
		/* round trips owed by now: two switches each */
		uint64_t due = (uint64_t)((double)(t - start) * rate / 2e9);

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
		if (trips >= due) {
			struct timespec ms = { .tv_nsec = 1000000 };
			nanosleep(&ms, NULL);
		}
	}
	t = now_ns();
	close(to_child[1]);
	waitpid(pid, NULL, 0);
	printf("%.0f\n", (double)trips * 2e9 / (double)(t - start));
	return 0;
}
