/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time now on a clock, in nanoseconds. */
#ifndef FR_CLOCK_H
#define FR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t fr_now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
