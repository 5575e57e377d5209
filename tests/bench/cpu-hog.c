/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark workload: a fixed amount of pure CPU work; prints seconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000000ULL, x = 88172645463325252ULL;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* print x to stderr so the loop cannot be optimised away */
	fprintf(stderr, "%llu\n", (unsigned long long)x);
	printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
