/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bpf/clock-filter.h, the sched program's offset from the run queue's
 * clock to CLOCK_BOOTTIME, fed measurements as the kernel gives them:
 * late by microseconds, now and then by milliseconds (a stalled vCPU),
 * with the true offset slewed by NTP or stepped by a resume from
 * suspend.  The offset must stay within microseconds of the truth
 * through a late outlier, come back at once from one that was taken, and
 * follow a step once two measurements show it. */
#include <stdint.h>
#include <stdlib.h>

#include "../../bpf/clock-filter.h"
#include "test.h"

#define US 1000LL
#define MS 1000000LL

static struct fr_clock_filter f;
static uint64_t c = 1000 * MS;           /* the run queue's clock */
static int64_t truth = 5000 * MS;        /* CLOCK_BOOTTIME - that clock */
static unsigned seed = 1;

/* One measurement FR_CLOCK_PERIOD_NS after the last, late by @late ns. */
static void measure(int64_t late)
{
	c += FR_CLOCK_PERIOD_NS;
	CHECK(fr_clock_filter_due(&f, c));
	fr_clock_filter_measure(&f, c, c + (uint64_t)truth + (uint64_t)late);
}

/* A usual measurement: 0-10 us late. */
static void usual(void)
{
	measure(rand_r(&seed) % (10 * US));
}

static int64_t error(void)
{
	return (int64_t)f.offset - truth;
}

int main(void)
{
	/* the first measurement is taken as it is; one is not due sooner
	 * than a period later */
	fr_clock_filter_measure(&f, c, c + (uint64_t)truth + 3 * US);
	CHECK_EQ(error(), 3 * US);
	CHECK(!fr_clock_filter_due(&f, c + FR_CLOCK_PERIOD_NS - 1));
	for (int i = 0; i < 1000; i++)
		usual();
	CHECK(error() >= 0 && error() < 10 * US);

	/* one measurement 2 ms late (a vCPU stopped between the reads):
	 * it moves the offset by the slew at most, and not for long */
	for (int64_t late = 1 * MS; late <= 50 * MS; late *= 7) {
		int64_t before = error();
		measure(late);
		CHECK(error() - before <= 1 * US);
		usual();
		CHECK(error() >= 0 && error() < 10 * US);
	}

	/* two late ones in a row are taken as a step, the smaller of the
	 * two, and undone by the next usual one: it shows the offset high */
	measure(2 * MS);
	measure(3 * MS);
	CHECK(error() >= 2 * MS - 10 * US && error() <= 2 * MS + 10 * US);
	usual();
	CHECK(error() >= 0 && error() < 10 * US);

	/* a late measurement of a clock older than the last one measured
	 * (two CPUs racing): it moves nothing */
	int64_t before = error();
	fr_clock_filter_measure(&f, c - 10 * US, c - 10 * US + (uint64_t)truth + 2 * MS);
	CHECK(error() <= before);
	fr_clock_filter_measure(&f, c - 20 * US, c - 20 * US + (uint64_t)truth + 5 * US);
	CHECK(error() <= before);
	usual();
	CHECK(error() >= 0 && error() < 10 * US);

	/* a resume from 5 s of suspend: CLOCK_BOOTTIME moves 5 s ahead of
	 * the run queue's clock, taken at the second measurement */
	truth += 5000 * MS;
	usual();
	CHECK(error() < -4000 * MS);
	usual();
	CHECK(error() >= 0 && error() < 10 * US);

	/* NTP slewing CLOCK_BOOTTIME by 500 ppm either way: followed */
	for (int dir = -1; dir <= 1; dir += 2)
		for (int i = 0; i < 5000; i++) {
			truth += dir * (int64_t)FR_CLOCK_PERIOD_NS / 2000;
			usual();
			CHECK(error() > -2 * US && error() < 12 * US);
		}

	/* a few hundred thousand measurements with an outlier about one time
	 * in a thousand, never two in a row (those are a step, above): never
	 * more than the usual lateness off */
	int64_t worst = 0;
	bool last_late = false;
	for (int i = 0; i < 300000; i++) {
		last_late = !last_late && rand_r(&seed) % 1000 == 0;
		if (last_late)
			measure(1 * MS + rand_r(&seed) % (5 * MS));
		else
			usual();
		if (error() > worst)
			worst = error();
	}
	CHECK(worst < 12 * US);
	return test_failures ? 1 : 0;
}
