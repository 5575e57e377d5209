/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "macro.h"
#include "str-append.h"

void fr_str_append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (k > 0)
		*at = MIN(*at + (size_t)k, len - 1);
}
