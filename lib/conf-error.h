/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* "file:line: message" for configuration errors, shared by the setting
 * table (conf.c) and the trigger rules (rules.c). */
#ifndef FR_CONF_ERROR_H
#define FR_CONF_ERROR_H

#include <libconfig.h>
#include <stddef.h>

struct fr_conf_ctx {
	const char *file;
	char *err;
	size_t errlen;
};

/* Writes the message for setting @s (its line, or none when it has no
 * line) into ctx->err and returns -EINVAL. */
int fr_conf_fail(const struct fr_conf_ctx *x, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), nonnull(3)));

#endif
