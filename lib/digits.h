/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Decimal digits of unsigned numbers, written without printf: for the
 * printers of millions of records. */
#ifndef FR_DIGITS_H
#define FR_DIGITS_H

#include <stdint.h>
#include <string.h>

/* How many digits @v has. */
static inline unsigned fr_digits(uint64_t v)
{
	unsigned n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* The digits of @v, ending at @end (room for 20 before it); returns
 * where they start.  Two digits a division. */
static inline char *fr_format_u64(uint64_t v, char *end)
{
	static const char pairs[] =
		"0001020304050607080910111213141516171819"
		"2021222324252627282930313233343536373839"
		"4041424344454647484950515253545556575859"
		"6061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char *p = end;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, pairs + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pairs + 2 * v, 2);
	} else
		*--p = (char)('0' + v);
	return p;
}

#endif
