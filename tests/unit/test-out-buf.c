/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/out-buf: the terminal-safe copy (sixteen or eight bytes at a time)
 * against a byte-wise reference, for every byte value at every offset of a
 * word; numbers against printf; writes of every small length; growth of
 * the in-memory buffer. */
#include <inttypes.h>
#include <stdint.h>

#include "macro.h"
#include "out-buf.h"
#include "test.h"

/* The rule, one byte at a time. */
static size_t reference(const unsigned char *s, size_t n, char nul, char *d)
{
	char *p = d;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c >= 0x20 && c != 0x7f && c != '\\')
			*p++ = (char)c;
		else if (c == 0 && nul)
			*p++ = nul;
		else
			p += sprintf(p, "\\x%02x", c);
	}
	return (size_t)(p - d);
}

/* one buffer for the many checks: cheap under the sanitizers too */
static struct fr_out o;

static void check_one(const unsigned char *s, size_t n, char nul)
{
	char want[4 * 64 + 1];
	size_t wn = reference(s, n, nul, want);

	o.len = 0;
	if (nul)
		fr_out_safe_list(&o, (const char *)s, n, nul);
	else
		fr_out_safe(&o, (const char *)s, n);
	/* safe_list drops the last string's terminator */
	if (nul && n && !s[n - 1])
		wn--;
	CHECK_EQ(o.len, wn);
	CHECK(o.len == wn && memcmp(o.p, want, wn) == 0);
}

static void check_numbers(void)
{
	static const uint64_t edges[] = { 0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 65535, 4294967295ULL,
					  4294967296ULL, 9999999999999999999ULL, 10000000000000000000ULL,
					  UINT64_MAX - 1, UINT64_MAX };
	unsigned long long state = 1;
	char want[64];

	o.len = 0;
	for (size_t i = 0; i < ELEMENTSOF(edges) + 100000; i++) {
		uint64_t v = i < ELEMENTSOF(edges) ? edges[i] : test_xorshift(&state) >> (i % 64);
		int n;

		o.len = 0;
		fr_out_u64(&o, v);
		fr_out_putc(&o, ' ');
		fr_out_i64(&o, (int64_t)v);
		fr_out_putc(&o, ' ');
		fr_out_u64_pad(&o, v % 1000, 5);
		fr_out_putc(&o, '|');
		n = snprintf(want, sizeof(want), "%" PRIu64 " %" PRId64 " %-5" PRIu64 "|", v, (int64_t)v, v % 1000);
		CHECK(o.len == (size_t)n && memcmp(o.p, want, (size_t)n) == 0);
	}
}

/* Every length a piece may have, at every alignment, and across a flush. */
static void check_writes(void)
{
	char src[80], want[80 * 80];
	size_t wn = 0;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)('A' + i % 50);
	o.len = 0;
	for (size_t n = 0; n <= 40; n++)
		for (size_t at = 0; at < 17; at += 4) {
			fr_out_write(&o, src + at, n);
			memcpy(want + wn, src + at, n);
			wn += n;
		}
	CHECK(o.len == wn && memcmp(o.p, want, wn) == 0);
}

int main(void)
{
	unsigned char s[40];

	CHECK_EQ(fr_out_init(&o, NULL), 0);
	check_numbers();
	check_writes();

	for (unsigned c = 0; c < 256; c++)
		for (size_t at = 0; at < 24; at++)
			for (size_t n = at + 1; n <= 24; n += 7) {
				memset(s, 'a', sizeof(s));
				s[at] = (unsigned char)c;
				check_one(s, n, 0);
				check_one(s, n, ' ');
			}
	/* neighbours of the special values in every lane */
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = (unsigned char)(0x1e + i * 3);
	check_one(s, sizeof(s), 0);
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = (unsigned char)(0x7d + i % 5 + (i % 2) * 0x80);
	check_one(s, sizeof(s), 0);

	/* many special bytes per word, in random mixes */
	static const unsigned char pick[] = { 0, 0, 0, 1, 0x1f, 0x20, 0x21, 0x5b, 0x5c, 0x5d,
					      0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xdc, 0xff, 'a', 'z' };
	unsigned seed = 1;
	for (int round = 0; round < 100000; round++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % (int)sizeof(s));
		for (size_t i = 0; i < n; i++)
			s[i] = pick[rand_r(&seed) % (int)sizeof(pick)];
		check_one(s, n, 0);
		check_one(s, n, ' ');
		check_one(s, n, ',');
	}

	CHECK_EQ(fr_out_end(&o), 0);

	/* the in-memory buffer grows past its first size */
	struct fr_out g;
	static char big[3 << 20];
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	CHECK_EQ(fr_out_init(&g, NULL), 0);
	fr_out_safe(&g, big, sizeof(big));
	CHECK_EQ(g.len, sizeof(big) - 1 + 4);
	CHECK(memcmp(g.p + sizeof(big) - 1, "\\x0a", 4) == 0);
	CHECK_EQ(fr_out_end(&g), 0);
	return test_failures ? 1 : 0;
}
