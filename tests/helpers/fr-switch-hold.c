/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload for switch batches: fr-switch-hold CPU SECONDS.
 * On CPU, it sleeps 20 ms, so that the CPU goes idle (switching to idle
 * writes out the CPU's batch: nothing older stays held), then, woken,
 * takes the real-time class (SCHED_FIFO 1), prints its pid, and spins for
 * SECONDS without a system call, keeping the CPU busy so that it never
 * goes idle or switches (the normal-class threads of the kernel and of
 * others wait: until the kernel's real-time throttling lets them run,
 * 0.95 s into each second by default).  The switch into it when it woke
 * (after its switch out at the sleep, on the same CPU) is then held in
 * that CPU's batch unless the daemon asks for it; whatever else ran on
 * the CPU meanwhile does not matter.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	struct sched_param prio = { .sched_priority = 1 };
	volatile unsigned long sink = 0;
	cpu_set_t set;

	if (argc != 3) {
		fprintf(stderr, "usage: fr-switch-hold CPU SECONDS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("fr-switch-hold: affinity");
		return 1;
	}
	(void)nanosleep(&nap, NULL);
	if (sched_setscheduler(0, SCHED_FIFO, &prio) < 0) {
		perror("fr-switch-hold: SCHED_FIFO");
		return 1;
	}
	/* no write(2) now: printf's buffer goes out when flushed, once (to
	 * a regular file: it does not block) */
	printf("%d\n", getpid());
	fflush(stdout);
	for (double end = now() + atof(argv[2]); now() < end;)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
	return 0;
}
