/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload for CPU sampling: for SECONDS of CPU time, spends 70 % of
 * it in fr_spin_seventy() and 30 % in fr_spin_thirty(), alternating every
 * 10 ms.  Built with frame pointers, so stacks unwind through main().
 * Prints its pid first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
	uint64_t end;

	printf("%d\n", getpid());
	fflush(stdout);
	end = cpu_ns() + (uint64_t)(secs * 1e9);
	while (cpu_ns() < end) {
		fr_spin_seventy(7000000);
		fr_spin_thirty(3000000);
	}
	return 0;
}
