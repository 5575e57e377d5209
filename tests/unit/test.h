/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal assertions for unit tests: a failed check prints where and why
 * and makes the test exit non-zero. */
#ifndef FR_TEST_H
#define FR_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                              \
		}                                                                     \
	} while (0)

#define CHECK_EQ(a, b)                                                                \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (_a != _b) {                                                       \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, _a, _b);                            \
			test_failures++;                                              \
		}                                                                     \
	} while (0)

#define CHECK_STR(a, b)                                                               \
	do {                                                                          \
		const char *_a = (a), *_b = (b);                                      \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                              \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
				__FILE__, __LINE__, #a, #b, _a ? _a : "(null)",        \
				_b ? _b : "(null)");                                  \
			test_failures++;                                              \
		}                                                                     \
	} while (0)

/* A reproducible pseudo-random sequence (xorshift64) from *@state. */
static inline unsigned long long test_xorshift(unsigned long long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#define TEST_DONE() (test_failures ? (fprintf(stderr, "%d checks failed\n", test_failures), 1) : 0)

#endif
