/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the setting table (conf.c) and the trigger rules (rules.c):
 * "file:line: message" for configuration errors, and integers as they
 * are written. */
#ifndef FR_CONF_ERROR_H
#define FR_CONF_ERROR_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fr_conf_ctx {
	const char *file;
	char *err;
	size_t errlen;
};

/* Writes the message for setting @s (its line, or none when it has no
 * line) into ctx->err and returns -EINVAL. */
int fr_conf_fail(const struct fr_conf_ctx *x, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), nonnull(3)));

/* The value of integer setting @s as written in its file: libconfig 1.5
 * reads a literal without the L suffix into 32 bits, cutting off the rest
 * without a word (4294967346 reads as 50); that literal is read again
 * from the setting's line, whole (LLONG_MAX/MIN past those), so range
 * checks see what was written.  libconfig's value when the line does not
 * show it. */
long long fr_conf_int(const struct fr_conf_ctx *x, const config_setting_t *s);

/* Duration setting @s ("10s") in [@min, @max] into *@ret: 0, or
 * fr_conf_fail()'s -EINVAL with the range worded as durations. */
int fr_conf_duration(const struct fr_conf_ctx *x, const config_setting_t *s, uint64_t min, uint64_t max,
		     uint64_t *ret);

/* An array of signal names ("SIGSEGV") @s (not empty if @nonempty) into
 * the bits of *@mask: 0, or fr_conf_fail()'s -EINVAL naming the element
 * that is not one. */
int fr_conf_signals(const struct fr_conf_ctx *x, const config_setting_t *s, bool nonempty, uint64_t *mask);

/* An array of system call names @s (not empty if @nonempty) into the
 * bits of @bits, @words 64-bit words (cleared first): 0, or
 * fr_conf_fail()'s -EINVAL. */
int fr_conf_syscalls(const struct fr_conf_ctx *x, const config_setting_t *s, bool nonempty, uint64_t *bits,
		     size_t words);

#endif
