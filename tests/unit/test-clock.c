/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/clock: the offsets of the wall and monotonic clocks from
 * CLOCK_BOOTTIME stay right when the reader is held up between its clock
 * reads (here by sleeping inside the bracket, as a preempted thread or a
 * descheduled virtual CPU would be), and the width of the bracket kept
 * says how far off they can be. */
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "test.h"

#define STALL_NS 2000000 /* 2 ms: far more than a bracket, far less than a test */

static unsigned calls, stall_first;

static void stall(unsigned attempt)
{
	calls++;
	if (attempt < stall_first)
		nanosleep(&(struct timespec){ .tv_nsec = STALL_NS }, NULL);
}

static int64_t dist(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}

int main(void)
{
	struct fr_clock_offsets ref, off;
	uint64_t width;

	/* undisturbed: one bracket, narrow */
	width = fr_clock_offsets_read(&ref, NULL);
	CHECK(width <= FR_CLOCK_BRACKET_NS || fr_clock_offsets_read(&ref, NULL) <= FR_CLOCK_BRACKET_NS);

	/* held up in the first three brackets: those are read again, and the
	 * offsets come out as if nothing had happened (one stalled bracket
	 * would put them 1 ms off, one read without a bracket 2 ms) */
	for (unsigned stalls = 1; stalls <= 3; stalls++) {
		calls = 0;
		stall_first = stalls;
		width = fr_clock_offsets_read(&off, stall);
		CHECK(width < STALL_NS / 4);
		CHECK(calls > stalls);
		CHECK(dist(off.realtime, ref.realtime) < STALL_NS / 4);
		CHECK(dist(off.monotonic, ref.monotonic) < STALL_NS / 4);
	}

	/* held up every time: FR_CLOCK_TRIES attempts, then the width says so */
	calls = 0;
	stall_first = FR_CLOCK_TRIES;
	width = fr_clock_offsets_read(&off, stall);
	CHECK_EQ(calls, FR_CLOCK_TRIES);
	CHECK(width >= STALL_NS);
	/* the middle of the bracket: off by half its width at most (and by
	 * the reference's own), not by a whole stall */
	CHECK((uint64_t)dist(off.realtime, ref.realtime) <= width / 2 + FR_CLOCK_BRACKET_NS);
	CHECK((uint64_t)dist(off.realtime, ref.realtime) < width);
	return test_failures ? 1 : 0;
}
