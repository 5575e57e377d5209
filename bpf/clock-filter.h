/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The offset from a CPU's run queue clock to CLOCK_BOOTTIME, as the sched
 * program keeps it for each CPU (sched.bpf.c, "Time"), from measurements
 * that are late and now and then very late.  A measurement is
 * CLOCK_BOOTTIME now less the run queue's clock as the scheduler last
 * updated it: late by what ran in between, and by the clock's age when
 * the scheduler skipped the update (which recent kernels no longer let a
 * tracepoint see).  Measured here with bpftrace over 5.2 M switches of
 * perf bench sched pipe in 25 s: 99.9 % under 32 us, 4 of 1-2 ms (a vCPU
 * the host stopped, or an old clock).  It is never early: the run queue's
 * clock was read first.  Hence:
 * - down at once: a measurement below the offset shows it too high;
 * - up by 1/1024 of the time since the last at most (NTP slews
 *   CLOCK_BOOTTIME by 500 ppm at most), so that a late one moves it by
 *   ~1 us, not by its lateness;
 * - a step up of more than FR_CLOCK_JUMP_NS beyond that is the clocks
 *   stepping apart (a resume from suspend, which CLOCK_BOOTTIME counts
 *   and the run queue's clock does not) when the next measurement shows
 *   it too: then the smaller of the two is taken.
 * An earlier rule took such a step from one measurement: one stalled vCPU
 * then put every converted time ~1-2 ms late until the slew brought it
 * back, 1-2 s later (the switch-clock check in test-sources saw 22 of 64
 * samples disagree once).  Plain C, no helpers, so that a unit test runs
 * the same code (tests/unit/test-clock-filter.c).
 */
#ifndef FR_BPF_CLOCK_FILTER_H
#define FR_BPF_CLOCK_FILTER_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#include <stdbool.h>
#endif

#define FR_CLOCK_PERIOD_NS 1000000ULL /* between measurements */
#define FR_CLOCK_JUMP_NS 1000000LL

struct fr_clock_filter {
	__u64 offset; /* CLOCK_BOOTTIME - run queue clock */
	__u64 at;     /* run queue clock of the last measurement; 0: none yet */
	__s64 step;   /* the step up the last measurement showed, unconfirmed; 0: none */
};

/* Is a measurement due at run queue clock @c? */
static inline __attribute__((always_inline)) bool fr_clock_filter_due(const struct fr_clock_filter *f, __u64 c)
{
	return f->at == 0 || c >= f->at + FR_CLOCK_PERIOD_NS;
}

/* Takes the measurement @b (CLOCK_BOOTTIME) - @c (the run queue's clock,
 * read before). */
static inline __attribute__((always_inline)) void fr_clock_filter_measure(struct fr_clock_filter *f, __u64 c, __u64 b)
{
	__s64 d = (__s64)(b - c - f->offset), since = (__s64)(c - f->at), s = f->step;
	__s64 slew = since >> 10;

	if (f->at != 0 && since <= 0) {
		/* a clock no later than the last measured (a CPU's only goes
		 * forward; kept so that one going back cannot wrap the slew):
		 * it can only bring the offset down */
		if (d < 0)
			f->offset += (__u64)d;
		return;
	}
	f->step = 0;
	if (f->at != 0) {
		if (d > slew + FR_CLOCK_JUMP_NS) {
			if (s == 0) {
				f->step = d;
				d = 0;
			} else if (s < d) {
				d = s;
			}
		} else if (d > slew) {
			d = slew;
		}
	}
	f->offset += (__u64)d;
	f->at = c;
}

#endif
