/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Human units: durations, sizes and points in time, as users type them. */
#ifndef FR_PARSE_H
#define FR_PARSE_H

#include <stdint.h>
#include <stddef.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

/* "500ms", "60s", "5m", "2h", "1d", "250us", "10ns"; a bare number is
 * refused (ambiguous).  Returns 0 or -EINVAL / -ERANGE. */
int fr_parse_duration(const char *s, uint64_t *ret_ns);

/* "64K", "512M", "1G", "4096" (bytes); binary multiples.  0 or -errno. */
int fr_parse_size(const char *s, uint64_t *ret_bytes);

/* A point in time as wall-clock ns since the epoch: RFC 3339
 * ("2026-11-21T12:00:00Z", "...+01:00", fractional seconds allowed),
 * "YYYY-MM-DD HH:MM[:SS]" in local time, "now", or a duration ago
 * ("-10m").  now_ns is the reference for relative forms. */
int fr_parse_time(const char *s, uint64_t now_ns, uint64_t *ret_ns);

/* Formats ns since the epoch as RFC 3339 UTC with nanoseconds. */
char *fr_format_rfc3339(uint64_t wall_ns, char *buf, size_t len);

/* Formats a duration compactly ("1.502s", "12ms"). */
char *fr_format_duration(uint64_t ns, char *buf, size_t len);
/* The same, not NUL-terminated, in @out; returns its length. */
#define FR_DURATION_MAX 32
size_t fr_format_duration_n(uint64_t ns, char out[static FR_DURATION_MAX]);

/* Formats a byte count with a binary unit ("12.0M"). */
char *fr_format_size(uint64_t bytes, char *buf, size_t len);

#endif
