/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload for CPU sampling: for SECONDS of CPU time, spends 70 % of
 * it in fr_spin_seventy() and 30 % in fr_spin_thirty().  Each round lasts
 * a pseudo-random 2 to 18 ms of CPU, split 70/30: a fixed period (it was
 * 7 ms + 3 ms) is close to half the 49 Hz sampling period, and under CPU
 * contention the scheduler's slices locked samples to one phase.  Built
 * with frame pointers, so stacks unwind through main().  Prints its pid
 * first.  fr-spin SECONDS fork: spins 0.5 s of CPU itself, then forks a
 * child that spins SECONDS (without an exec: the same mappings), prints
 * its pid, and waits for it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Work between clock reads, so the time is spent here, not in the vDSO. */
#define BURST 20000

void fr_spin_seventy(uint64_t ns);
void fr_spin_thirty(uint64_t ns);

__attribute__((noinline)) void fr_spin_seventy(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;

	while (cpu_ns() < end)
		for (unsigned i = 0; i < BURST; i++)
			sink += i * i;
}

__attribute__((noinline)) void fr_spin_thirty(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;

	while (cpu_ns() < end)
		for (unsigned i = 0; i < BURST; i++)
			sink += i ^ (i >> 3);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 4;
	uint64_t end, x = 0x9e3779b97f4a7c15ULL;

	printf("%d\n", getpid());
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "fork") == 0) {
		pid_t child;

		/* sampled: the daemon knows these mappings before the fork */
		end = cpu_ns() + 500000000ULL;
		while (cpu_ns() < end) {
			fr_spin_seventy(7000000);
			fr_spin_thirty(3000000);
		}
		child = fork();
		if (child < 0)
			return 1;
		if (child > 0) {
			printf("%d\n", child);
			fflush(stdout);
			return waitpid(child, NULL, 0) == child ? 0 : 1;
		}
	}
	end = cpu_ns() + (uint64_t)(secs * 1e9);
	while (cpu_ns() < end) {
		uint64_t round;

		/* xorshift64: rounds of 2..18 ms, 10 ms on average */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		round = 2000000 + x % 16000001;
		fr_spin_seventy(round * 7 / 10);
		fr_spin_thirty(round * 3 / 10);
	}
	return 0;
}
