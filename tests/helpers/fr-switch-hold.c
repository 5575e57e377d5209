/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload for switch batches: fr-switch-hold CPU ROUNDS SECONDS.
 * On CPU, a parent and its child pass a byte back and forth ROUNDS times
 * over two pipes (each round: parent -> child, child -> parent, the
 * child's switch to its parent being the last); the parent then takes
 * the real-time class (SCHED_FIFO 1), prints "PARENT CHILD", and spins
 * for SECONDS without a system call, keeping the CPU busy so that it
 * never goes idle or switches (the normal-class threads of the kernel and
 * of others wait: until the kernel's real-time throttling lets them run,
 * 0.95 s into each second by default); then it ends the child.  The
 * switches of the rounds are then held in that CPU's batch unless the
 * daemon asks for them.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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
	int to_child[2], to_parent[2];
	volatile unsigned long sink = 0;
	cpu_set_t set;
	pid_t child;
	char c = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: fr-switch-hold CPU ROUNDS SECONDS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0 || pipe(to_child) < 0 || pipe(to_parent) < 0) {
		perror("fr-switch-hold");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		/* ends with its parent, however that ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(to_child[1]);
		close(to_parent[0]);
		while (read(to_child[0], &c, 1) == 1)
			if (write(to_parent[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (int i = 0; i < atoi(argv[2]); i++)
		if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1) {
			perror("fr-switch-hold: pipe");
			return 1;
		}
	struct sched_param prio = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO, &prio) < 0) {
		perror("fr-switch-hold: SCHED_FIFO");
		return 1;
	}
	/* no write(2) now: printf's buffer goes out when flushed, once */
	printf("%d %d\n", getpid(), child);
	fflush(stdout);
	for (double end = now() + atof(argv[3]); now() < end;)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
