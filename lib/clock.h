/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Clocks: the time now on one, and how the wall and monotonic clocks
 * stand against CLOCK_BOOTTIME, which BPF stamps records with. */
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

/* CLOCK_REALTIME and CLOCK_MONOTONIC less CLOCK_BOOTTIME, in ns. */
struct fr_clock_offsets {
	int64_t realtime, monotonic;
};

/* Reads both offsets now.  They are read between two reads of
 * CLOCK_BOOTTIME, again while those lie more than FR_CLOCK_BRACKET_NS
 * apart (up to FR_CLOCK_TRIES times, keeping the closest pair): a thread
 * preempted, or a virtual CPU descheduled, between the reads would
 * otherwise put the offsets off by the time it was away, and every
 * record converted with them by as much.  @between, when not NULL, is
 * called inside each bracket with the attempt's number (tests make it
 * stall).  Returns the width of the bracket kept, in ns. */
#define FR_CLOCK_BRACKET_NS 20000
#define FR_CLOCK_TRIES 8
uint64_t fr_clock_offsets_read(struct fr_clock_offsets *ret, void (*between)(unsigned attempt));

#endif
