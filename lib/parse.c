/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digits.h"
#include "macro.h"
#include "parse.h"

/* Parses "<number><unit>" with an optional fraction; units from @units.
 * Several terms ("1m30s") are summed. */
struct unit {
	const char *suffix;
	uint64_t mult;
};

static int parse_units(const char *s, const struct unit *units, int allow_bare, uint64_t *ret)
{
	uint64_t total = 0;

	if (!s || !*s)
		return -EINVAL;
	while (*s) {
		uint64_t ip = 0, fnum = 0, fden = 1, mult = 0;
		const char *start = s;
		size_t best = 0;

		while (isdigit((unsigned char)*s)) {
			if (ip > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			ip = ip * 10 + (uint64_t)(*s++ - '0');
		}
		if (*s == '.') {
			s++;
			while (isdigit((unsigned char)*s)) {
				if (fden < 1000000000ULL) {
					fnum = fnum * 10 + (uint64_t)(*s - '0');
					fden *= 10;
				}
				s++;
			}
		}
		if (s == start || (s == start + 1 && *start == '.'))
			return -EINVAL;
		for (const struct unit *u = units; u->suffix; u++) {
			size_t n = strlen(u->suffix);
			if (n > best && strncmp(s, u->suffix, n) == 0) {
				best = n;
				mult = u->mult;
			}
		}
		if (best == 0) {
			if (*s || !allow_bare || fden != 1)
				return -EINVAL;
			mult = 1;
		}
		s += best;
		if (ip && mult > UINT64_MAX / ip)
			return -ERANGE;
		if (UINT64_MAX - total < ip * mult + fnum * mult / fden)
			return -ERANGE;
		total += ip * mult + fnum * mult / fden;
	}
	*ret = total;
	return 0;
}

int fr_parse_duration(const char *s, uint64_t *ret_ns)
{
	static const struct unit units[] = {
		{ "ns", 1 },
		{ "us", NSEC_PER_USEC },
		{ "ms", NSEC_PER_MSEC },
		{ "s", NSEC_PER_SEC },
		{ "m", 60 * NSEC_PER_SEC },
		{ "min", 60 * NSEC_PER_SEC },
		{ "h", 3600 * NSEC_PER_SEC },
		{ "d", 86400 * NSEC_PER_SEC },
		{},
	};
	return parse_units(s, units, 0, ret_ns);
}

int fr_parse_size(const char *s, uint64_t *ret_bytes)
{
	static const struct unit units[] = {
		{ "K", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "M", 1ULL << 20 }, { "MiB", 1ULL << 20 },
		{ "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
		{ "T", 1ULL << 40 }, { "TiB", 1ULL << 40 },
		{ "B", 1 },
		{},
	};
	return parse_units(s, units, 1, ret_bytes);
}

/* Days since the epoch of a proleptic Gregorian date (UTC), so RFC 3339
 * parsing does not depend on TZ or on timegm's range. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int local_time(int y, int mo, int d, int h, int mi, int sec, uint64_t frac, uint64_t *ret_ns)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi, .tm_sec = sec, .tm_isdst = -1 };
	time_t t = mktime(&tm);

	if (t == (time_t)-1 || t < 0)
		return -EINVAL;
	*ret_ns = (uint64_t)t * NSEC_PER_SEC + frac;
	return 0;
}

int fr_parse_time(const char *s, uint64_t now_ns, uint64_t *ret_ns)
{
	int y, mo, d, h, mi, sec = 0, n = 0;
	uint64_t frac = 0, dur;
	const char *p;
	char sep;

	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret_ns = now_ns;
		return 0;
	}
	if (s[0] == '-') {
		if (fr_parse_duration(s + 1, &dur) < 0)
			return -EINVAL;
		if (dur > now_ns)
			return -ERANGE;
		*ret_ns = now_ns - dur;
		return 0;
	}
	if (sscanf(s, "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &n) != 6 ||
	    (sep != 'T' && sep != 't' && sep != ' '))
		return -EINVAL;
	p = s + n;
	if (*p == ':') {
		if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]))
			return -EINVAL;
		sec = (p[1] - '0') * 10 + (p[2] - '0');
		p += 3;
		if (*p == '.') {
			uint64_t scale = 100000000ULL;
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			for (; isdigit((unsigned char)*p); p++) {
				frac += (uint64_t)(*p - '0') * scale;
				scale /= 10;
			}
		}
	}
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970)
		return -EINVAL;

	if (*p == '\0')
		/* no zone: local time, as people type it */
		return local_time(y, mo, d, h, mi, sec, frac, ret_ns);

	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om, m = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &m) != 2 || m != 5 || oh > 23 || om > 59)
			return -EINVAL;
		off = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else
		return -EINVAL;
	if (*p)
		return -EINVAL;

	int64_t t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - off;
	if (t < 0)
		return -ERANGE;
	*ret_ns = (uint64_t)t * NSEC_PER_SEC + frac;
	return 0;
}

char *fr_format_rfc3339(uint64_t wall_ns, char *buf, size_t len)
{
	time_t t = (time_t)(wall_ns / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(buf, len, "invalid");
		return buf;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRIu64 "Z", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (uint64_t)(wall_ns % NSEC_PER_SEC));
	return buf;
}

/* @ns in units of @step ns (a constant where inlined: a multiply, not a
 * division), rounded half up */
static inline uint64_t round_to(uint64_t ns, uint64_t step)
{
	return ns / step + (ns % step >= (step + 1) / 2);
}

size_t fr_format_duration_n(uint64_t ns, char out[static FR_DURATION_MAX])
{
	const char *suffix = "us";
	uint64_t v = ns, whole;
	unsigned frac;
	char *p;

	/* three decimals, rounded half up; integer arithmetic, digits
	 * written in place (this is on the path of every record dump
	 * prints) */
	if (ns < NSEC_PER_USEC) {
		p = out + fr_digits(ns);
		fr_format_u64(ns, p);
		memcpy(p, "ns", 2);
		return (size_t)(p + 2 - out);
	}
	if (ns >= NSEC_PER_SEC) {
		v = round_to(ns, NSEC_PER_SEC / 1000);
		suffix = "s";
	} else if (ns >= NSEC_PER_MSEC) {
		v = round_to(ns, NSEC_PER_MSEC / 1000);
		suffix = "ms";
	}
	whole = v / 1000;
	frac = (unsigned)(v % 1000);
	p = out + fr_digits(whole);
	fr_format_u64(whole, p);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	p[2] = (char)('0' + frac / 10 % 10);
	p[3] = (char)('0' + frac % 10);
	p[4] = suffix[0];
	p[5] = suffix[1];
	return (size_t)(p - out) + (suffix[1] ? 6 : 5);
}

char *fr_format_duration(uint64_t ns, char *buf, size_t len)
{
	char tmp[FR_DURATION_MAX];
	size_t n = MIN(fr_format_duration_n(ns, tmp), len - 1);

	memcpy(buf, tmp, n);
	buf[n] = 0;
	return buf;
}

char *fr_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGT";
	double v = (double)bytes;
	unsigned i = 0;

	while (v >= 1024 && i < sizeof(units) - 2) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64 "B", (uint64_t)bytes);
	else
		snprintf(buf, len, "%.1f%c", v, units[i]);
	return buf;
}
