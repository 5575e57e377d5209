/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The few fields of /proc/PID/stat we read (the daemon's per-process CPU
 * in its metrics, the parser helper's state).  The name between the
 * parentheses is the process's own and may hold anything, parentheses
 * and spaces included: the fields are read after the last ')'.
 */
#ifndef FR_PROC_STAT_H
#define FR_PROC_STAT_H

#include <stdint.h>

struct fr_proc_stat {
	char comm[17];   /* cut to 16 bytes, NUL-terminated */
	char state;      /* 'R', 'S', 'D', 'T', 't', 'Z', ... */
	uint64_t utime;  /* clock ticks */
	uint64_t stime;
};

/* Fills @st from /proc/@pid/stat: 0, or -errno (-ESRCH when the process
 * is gone, -EBADMSG when the file is not what it should be). */
int fr_proc_stat_read(uint32_t pid, struct fr_proc_stat *st);

#endif
