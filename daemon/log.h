/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging for the daemon: plain stderr lines with <N> priority prefixes,
 * which journald turns into priorities and a terminal shows as-is.
 */
#ifndef FR_LOG_H
#define FR_LOG_H

#include <errno.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#define log_full(prio, fmt, ...) fprintf(stderr, prio fmt "\n", ##__VA_ARGS__)
#define log_error(fmt, ...) log_full(SD_ERR, fmt, ##__VA_ARGS__)
#define log_warning(fmt, ...) log_full(SD_WARNING, fmt, ##__VA_ARGS__)
#define log_notice(fmt, ...) log_full(SD_NOTICE, fmt, ##__VA_ARGS__)
#define log_info(fmt, ...) log_full(SD_INFO, fmt, ##__VA_ARGS__)
#define log_debug(fmt, ...) \
	do { if (fr_log_debug) log_full(SD_DEBUG, fmt, ##__VA_ARGS__); } while (0)

/* Logs with %m bound to -r and returns r, so call sites read
 * `return log_error_errno(r, "Failed to …: %m");` */
#define log_errno_full(prio, r, fmt, ...) \
	({ int _r_ = (r); errno = _r_ < 0 ? -_r_ : _r_; log_full(prio, fmt, ##__VA_ARGS__); _r_ < 0 ? _r_ : -_r_; })
#define log_error_errno(r, fmt, ...) log_errno_full(SD_ERR, r, fmt, ##__VA_ARGS__)
#define log_warning_errno(r, fmt, ...) log_errno_full(SD_WARNING, r, fmt, ##__VA_ARGS__)
#define log_info_errno(r, fmt, ...) log_errno_full(SD_INFO, r, fmt, ##__VA_ARGS__)

#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")

extern int fr_log_debug;

#endif
