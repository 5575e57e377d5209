/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-error.h"
#include "parse.h"

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

/* The literal assigned to @name on line @l ("name = 123" or "name: 0x7b"),
 * when no such assignment there has value @v: a cut-off one. */
static long long literal_on_line(const char *l, const char *name, long long v)
{
	size_t nl = strlen(name);
	bool other = false;
	long long lit = v;

	for (const char *p = strstr(l, name); p; p = strstr(p + 1, name)) {
		const char *q = p + nl;
		char *end;
		long long n;

		/* a whole name: libconfig's are letters, digits, '_', '-', '*' */
		if (p > l && (isalnum((unsigned char)p[-1]) || strchr("_-*", p[-1])))
			continue;
		q += strspn(q, " \t");
		if (*q != '=' && *q != ':')
			continue;
		q++;
		q += strspn(q, " \t");
		errno = 0;
		n = strtoll(q, &end, 0);
		if (end == q || *end == 'L')
			continue; /* not a number; or one libconfig reads whole */
		if (n == v && errno == 0)
			return v; /* as written */
		other = true;
		lit = n;
	}
	return other ? lit : v;
}

long long fr_conf_int(const struct fr_conf_ctx *x, const config_setting_t *s)
{
	long long v = config_setting_get_int64(s);
	const char *file = config_setting_source_file(s), *name = config_setting_name(s);
	int line = config_setting_source_line(s), at = 0;
	char *buf = NULL;
	size_t cap = 0;
	FILE *f;

	if (config_setting_type(s) != CONFIG_TYPE_INT || !name || line <= 0)
		return v;
	f = fopen(file ? file : x->file, "re");
	if (!f)
		return v;
	while (getline(&buf, &cap, f) >= 0)
		if (++at == line) {
			v = literal_on_line(buf, name, v);
			break;
		}
	free(buf);
	fclose(f);
	return v;
}

int fr_conf_duration(const struct fr_conf_ctx *x, const config_setting_t *s, uint64_t min, uint64_t max,
		     uint64_t *ret)
{
	const char *str;
	char a[32], b[32];
	uint64_t v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fr_conf_fail(x, s, "'%s' must be a duration string such as \"10s\"", config_setting_name(s));
	str = config_setting_get_string(s);
	if (fr_parse_duration(str, &v) < 0)
		return fr_conf_fail(x, s, "'%s': invalid duration \"%s\"", config_setting_name(s), str);
	if (v < min || v > max)
		return fr_conf_fail(x, s, "'%s' = \"%s\" is out of range [%s, %s]", config_setting_name(s), str,
				    fr_format_duration(min, a, sizeof(a)), fr_format_duration(max, b, sizeof(b)));
	*ret = v;
	return 0;
}
