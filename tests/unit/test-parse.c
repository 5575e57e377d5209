/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "parse.h"
#include "test.h"

int main(void)
{
	uint64_t v;
	char buf[64];

	setenv("TZ", "UTC", 1);

	CHECK_EQ(fr_parse_duration("500ms", &v), 0); CHECK_EQ(v, 500 * NSEC_PER_MSEC);
	CHECK_EQ(fr_parse_duration("60s", &v), 0); CHECK_EQ(v, 60 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_duration("5m", &v), 0); CHECK_EQ(v, 300 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_duration("2h", &v), 0); CHECK_EQ(v, 7200 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_duration("1m30s", &v), 0); CHECK_EQ(v, 90 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_duration("1.5s", &v), 0); CHECK_EQ(v, 1500 * NSEC_PER_MSEC);
	CHECK_EQ(fr_parse_duration("250us", &v), 0); CHECK_EQ(v, 250 * NSEC_PER_USEC);
	CHECK_EQ(fr_parse_duration("10", &v), -EINVAL);     /* unit required */
	CHECK_EQ(fr_parse_duration("", &v), -EINVAL);
	CHECK_EQ(fr_parse_duration("5x", &v), -EINVAL);
	CHECK_EQ(fr_parse_duration("-5s", &v), -EINVAL);
	CHECK_EQ(fr_parse_duration("s", &v), -EINVAL);
	CHECK_EQ(fr_parse_duration("99999999999999999999s", &v), -ERANGE);

	CHECK_EQ(fr_parse_size("64K", &v), 0); CHECK_EQ(v, 65536);
	CHECK_EQ(fr_parse_size("512M", &v), 0); CHECK_EQ(v, 512ULL << 20);
	CHECK_EQ(fr_parse_size("1G", &v), 0); CHECK_EQ(v, 1ULL << 30);
	CHECK_EQ(fr_parse_size("4096", &v), 0); CHECK_EQ(v, 4096);
	CHECK_EQ(fr_parse_size("1.5K", &v), 0); CHECK_EQ(v, 1536);
	CHECK_EQ(fr_parse_size("12Q", &v), -EINVAL);
	CHECK_EQ(fr_parse_size("99999999999T", &v), -ERANGE);

	uint64_t now = 1763726400ULL * NSEC_PER_SEC; /* 2025-11-21T12:00:00Z */
	CHECK_EQ(fr_parse_time("2025-11-21T12:00:00Z", now, &v), 0); CHECK_EQ(v, now);
	CHECK_EQ(fr_parse_time("2025-11-21T13:00:00+01:00", now, &v), 0); CHECK_EQ(v, now);
	CHECK_EQ(fr_parse_time("2025-11-21T12:00:00.25Z", now, &v), 0); CHECK_EQ(v, now + 250 * NSEC_PER_MSEC);
	CHECK_EQ(fr_parse_time("2025-11-21 12:00", now, &v), 0); CHECK_EQ(v, now); /* local = UTC here */
	CHECK_EQ(fr_parse_time("2025-11-21 12:00:30", now, &v), 0); CHECK_EQ(v, now + 30 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_time("-10m", now, &v), 0); CHECK_EQ(v, now - 600 * NSEC_PER_SEC);
	CHECK_EQ(fr_parse_time("now", now, &v), 0); CHECK_EQ(v, now);
	CHECK_EQ(fr_parse_time("2025-13-01 00:00", now, &v), -EINVAL);
	CHECK_EQ(fr_parse_time("yesterday", now, &v), -EINVAL);
	CHECK_EQ(fr_parse_time("2025-11-21T12:00:00Zjunk", now, &v), -EINVAL);

	CHECK_STR(fr_format_rfc3339(now + 5, buf, sizeof(buf)), "2025-11-21T12:00:00.000000005Z");
	CHECK_STR(fr_format_duration(1502 * NSEC_PER_MSEC, buf, sizeof(buf)), "1.502s");
	CHECK_STR(fr_format_duration(0, buf, sizeof(buf)), "0ns");
	CHECK_STR(fr_format_duration(999, buf, sizeof(buf)), "999ns");
	CHECK_STR(fr_format_duration(1000, buf, sizeof(buf)), "1.000us");
	CHECK_STR(fr_format_duration(1234567, buf, sizeof(buf)), "1.235ms"); /* rounded half up */
	CHECK_STR(fr_format_duration(1234499, buf, sizeof(buf)), "1.234ms");
	CHECK_STR(fr_format_duration(999999999, buf, sizeof(buf)), "1000.000ms");
	CHECK_STR(fr_format_duration(3600 * NSEC_PER_SEC + 5, buf, sizeof(buf)), "3600.000s");
	CHECK_STR(fr_format_duration(UINT64_MAX, buf, sizeof(buf)), "18446744073.710s");
	CHECK_STR(fr_format_duration(1234567, buf, 4), "1.2"); /* cut, terminated */
	CHECK_STR(fr_format_size(12ULL << 20, buf, sizeof(buf)), "12.0M");
	return TEST_DONE();
}
