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
#include "syscall-names.h"

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

/* "SIGSEGV" -> 11; -1 for what is no signal name. */
static int signal_number(const char *name)
{
	for (int k = 1; k < 64; k++) {
		const char *ab = sigabbrev_np(k);
		if (ab && strncmp(name, "SIG", 3) == 0 && strcmp(name + 3, ab) == 0)
			return k;
	}
	return -1;
}

int fr_conf_signals(const struct fr_conf_ctx *x, const config_setting_t *s, bool nonempty, uint64_t *mask)
{
	const char *name = config_setting_name(s);
	int type = config_setting_type(s);

	if ((type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) || (nonempty && config_setting_length(s) == 0))
		return fr_conf_fail(x, s, "'%s' must be a%s array of signal names such as \"SIGSEGV\"", name,
				    nonempty ? " non-empty" : "n");
	*mask = 0;
	for (int i = 0; i < config_setting_length(s); i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *sn = config_setting_type(e) == CONFIG_TYPE_STRING ? config_setting_get_string(e) : NULL;
		int n = sn ? signal_number(sn) : -1;
		if (!sn)
			return fr_conf_fail(x, e, "'%s' must contain signal names as strings", name);
		if (n < 0)
			return fr_conf_fail(x, e, "'%s': unknown signal \"%s\" (names such as \"SIGSEGV\")", name, sn);
		*mask |= 1ULL << n;
	}
	return 0;
}

int fr_conf_syscalls(const struct fr_conf_ctx *x, const config_setting_t *s, bool nonempty, uint64_t *bits,
		     size_t words)
{
	const char *name = config_setting_name(s);
	int type = config_setting_type(s);

	if ((type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) || (nonempty && config_setting_length(s) == 0))
		return fr_conf_fail(x, s, "'%s' must be a%s array of syscall names", name, nonempty ? " non-empty" : "n");
	memset(bits, 0, words * sizeof(*bits));
	for (int i = 0; i < config_setting_length(s); i++) {
		config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *sc = config_setting_type(e) == CONFIG_TYPE_STRING ? config_setting_get_string(e) : NULL;
		int nr = sc ? fr_syscall_number(sc) : -1;
		if (!sc)
			return fr_conf_fail(x, e, "'%s' must contain syscall names as strings", name);
		if (nr < 0 || (size_t)nr >= words * 64)
			return fr_conf_fail(x, e, "'%s': unknown system call \"%s\"", name, sc);
		bits[nr / 64] |= 1ULL << (nr % 64);
	}
	return 0;
}
