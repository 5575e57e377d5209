/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "conf-error.h"

int fr_conf_fail(const struct fr_conf_ctx *x, const config_setting_t *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int line = s ? config_setting_source_line(s) : 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(x->err, x->errlen, "%s:%d: %s", x->file, line, msg);
	else
		snprintf(x->err, x->errlen, "%s: %s", x->file, msg);
	return -EINVAL;
}
