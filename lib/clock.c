/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "clock.h"

uint64_t fr_clock_offsets_read(struct fr_clock_offsets *ret, void (*between)(unsigned attempt))
{
	uint64_t best = UINT64_MAX;

	for (unsigned i = 0; i < FR_CLOCK_TRIES && best > FR_CLOCK_BRACKET_NS; i++) {
		int64_t b0 = (int64_t)fr_now_ns(CLOCK_BOOTTIME);
		if (between)
			between(i);
		int64_t real = (int64_t)fr_now_ns(CLOCK_REALTIME);
		int64_t mono = (int64_t)fr_now_ns(CLOCK_MONOTONIC);
		int64_t b1 = (int64_t)fr_now_ns(CLOCK_BOOTTIME);
		/* the middle of the bracket: off by half its width at most */
		int64_t boot = b0 + (b1 - b0) / 2;

		if ((uint64_t)(b1 - b0) < best) {
			best = (uint64_t)(b1 - b0);
			*ret = (struct fr_clock_offsets){ .realtime = real - boot, .monotonic = mono - boot };
		}
	}
	return best;
}
