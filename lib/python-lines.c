/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "python-lines.h"

enum {
	LOC_ONE_LINE0 = 10, /* 10, 11, 12: the line moves by 0, 1, 2; two column bytes */
	LOC_NO_COLUMNS = 13, /* a signed varint line delta */
	LOC_LONG = 14,       /* a signed varint line delta, then three varints */
	LOC_NONE = 15,       /* no location: the line does not move, and is none */
	/* 0-9: the short forms, one column byte, same line */
};

/* A varint of 6-bit groups, least significant first, bit 6 set while
 * more follow; false when it runs past @end or over 32 bits. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint32_t *ret)
{
	uint32_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 32; shift += 6) {
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 63) << shift;
		if (!(b & 64)) {
			*ret = v;
			return 1;
		}
	}
	return 0;
}

uint32_t fr_py_line(const uint8_t *tab, size_t len, int32_t first, int32_t lasti)
{
	const uint8_t *p = tab, *end = tab + len;
	int64_t line = first;
	uint64_t unit = 0;

	if (lasti < 0)
		return first > 0 ? (uint32_t)first : 0;
	while (p < end) {
		uint8_t head = *p++;
		unsigned kind = (head >> 3) & 15;
		uint64_t next = unit + (head & 7) + 1;
		int64_t delta = 0;
		uint32_t v;

		if (!(head & 128))
			return 0; /* not an entry's start: not a table */
		if (kind == LOC_NO_COLUMNS || kind == LOC_LONG) {
			if (!read_varint(&p, end, &v))
				return 0;
			delta = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		} else if (kind >= LOC_ONE_LINE0 && kind < LOC_NO_COLUMNS) {
			delta = kind - LOC_ONE_LINE0;
		}
		line += delta;
		if ((uint64_t)lasti < next)
			return kind == LOC_NONE || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		unit = next;
		/* the rest of the entry: bytes without bit 7 */
		while (p < end && !(*p & 128))
			p++;
	}
	return 0;
}
