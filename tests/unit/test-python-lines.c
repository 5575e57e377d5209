/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fr_py_line() against CPython's own lines (code.co_lines()) for every
 * instruction of thousands of code objects (python-lines-vectors.py, run
 * with the python3 of the system: the line table format is 3.11's), and
 * against cut and hostile tables. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python-lines.h"
#include "test.h"

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	for (; s[0] && s[1] && n < max; s += 2) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}

int main(int argc, char **argv)
{
	static char head[1 << 20], lines[1 << 22];
	static uint8_t tab[1 << 19];
	char cmd[4096];
	unsigned long codes = 0, units = 0;
	FILE *f;

	if (argc != 2)
		return 2;
	snprintf(cmd, sizeof(cmd), "python3 '%s'", argv[1]);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(head, sizeof(head), f) && fgets(lines, sizeof(lines), f)) {
		int first = atoi(head);
		char *hex = strchr(head, ' '), *p = lines, *end;
		size_t len;
		int32_t u = 0;

		CHECK(hex != NULL);
		if (!hex)
			break;
		len = unhex(hex + 1, tab, sizeof(tab));
		for (long want = strtol(p, &end, 10); end != p; p = end, want = strtol(p, &end, 10), u++) {
			uint32_t got = fr_py_line(tab, len, first, u);
			if (got != (uint32_t)want) {
				fprintf(stderr, "code at line %d, unit %d: %u, CPython says %ld\n", first, u, got, want);
				test_failures++;
			}
			/* a table cut anywhere: the line, or 0, never another */
			if (len > 1) {
				uint32_t cut = fr_py_line(tab, len / 2, first, u);
				CHECK(cut == 0 || cut == got);
			}
			units++;
		}
		codes++;
	}
	CHECK(f && pclose(f) == 0);
	CHECK(codes > 1000);
	fprintf(stderr, "%lu code objects, %lu instructions\n", codes, units);

	/* before the first instruction: the first line */
	CHECK_EQ(fr_py_line(tab, 0, 7, -1), 7);
	/* not a table (no entry start), and a varint running off the end */
	CHECK_EQ(fr_py_line((const uint8_t *)"\x01\x02", 2, 7, 0), 0);
	CHECK_EQ(fr_py_line((const uint8_t *)"\xf0\x7f", 2, 7, 0), 0);
	/* 0xe8: a one-line entry of one unit, no move: the first line; the
	 * instruction after the table: none */
	CHECK_EQ(fr_py_line((const uint8_t *)"\xd0\x01\x02", 3, 7, 0), 7);
	CHECK_EQ(fr_py_line((const uint8_t *)"\xd0\x01\x02", 3, 7, 1), 0);
	return test_failures ? 1 : 0;
}
