/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload for unwinding without frame pointers: for SECONDS of CPU
 * time it spins in fr_deep_c(), called as main -> fr_deep_a -> fr_deep_b
 * -> fr_deep_c.  Built -O2 -fomit-frame-pointer -g, as distributions build
 * their programs: rbp is a general register here, so a frame-pointer walk
 * from fr_deep_c gets one or two frames and only .eh_frame (or the debug
 * file's .debug_frame) gives the whole chain.  Every call is followed by
 * work on its result, so none is a tail call even where sibling-call
 * optimisation is on, and the functions are noipa, so GCC neither inlines
 * nor clones them (no fr_deep_c.constprop.0 in the symbol table).
 * Built with -DFR_DEEP_INLINE (fr-deep-inline), fr_deep_b is always inlined
 * into fr_deep_a: only the debug information names it, as an inlined frame
 * between the two.
 *   fr-deep [SECONDS]   prints its pid, spins SECONDS of CPU (default 4)
 *   fr-deep brief       spins 50 ms of CPU and exits, printing nothing: a
 *                       process that is gone before anyone reads its maps
 *   fr-deep rounds N    a fixed amount of work, N bursts of the loop (no
 *                       clock reads): its run time is a slowdown's measure
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

/* not inlined into fr_deep_c: samples taken in it would otherwise have an
 * inlined frame under fr_deep_c and blur what the test counts */
__attribute__((noinline)) static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Work between clock reads (a system call each): ~0.1 ms, so almost every
 * sample lands in fr_deep_c itself. */
#define BURST 50000

uint64_t fr_deep_a(uint64_t ns, uint64_t n);
uint64_t fr_deep_c(uint64_t ns, uint64_t n);

/* Spins for @ns of CPU time, or @n bursts when @n is not 0; returns the
 * bursts done. */
__attribute__((noipa)) uint64_t fr_deep_c(uint64_t ns, uint64_t n)
{
	uint64_t end = n ? 0 : cpu_ns() + ns, rounds = 0;

	while (n ? rounds < n : cpu_ns() < end) {
		for (unsigned i = 0; i < BURST; i++)
			sink += i * i;
		rounds++;
	}
	return rounds;
}

#ifdef FR_DEEP_INLINE
static inline __attribute__((always_inline)) uint64_t fr_deep_b(uint64_t ns, uint64_t n)
#else
uint64_t fr_deep_b(uint64_t ns, uint64_t n);
__attribute__((noipa)) uint64_t fr_deep_b(uint64_t ns, uint64_t n)
#endif
{
	/* after the call: the return address stays inside fr_deep_b's code
	 * (its inlined range, in fr-deep-inline) */
	return fr_deep_c(ns, n) * 3 + (sink & 1);
}

__attribute__((noipa)) uint64_t fr_deep_a(uint64_t ns, uint64_t n)
{
	return fr_deep_b(ns, n) + (sink & 2);
}

int main(int argc, char **argv)
{
	int brief = argc > 1 && strcmp(argv[1], "brief") == 0;
	uint64_t n = argc > 2 && strcmp(argv[1], "rounds") == 0 ? strtoull(argv[2], NULL, 10) : 0;
	double secs = brief ? 0.05 : n ? 0 : argc > 1 ? atof(argv[1]) : 4;
	uint64_t r;

	if (secs <= 0 && !n) {
		fprintf(stderr, "usage: fr-deep [SECONDS | brief | rounds N]\n");
		return 2;
	}
	if (!brief) {
		printf("%d\n", getpid());
		fflush(stdout);
	}
	r = fr_deep_a((uint64_t)(secs * 1e9), n);
	/* uses the result: main's call is no tail call either */
	return r == 0 ? 1 : 0;
}
