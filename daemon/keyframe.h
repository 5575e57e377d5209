/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Keyframes: every store.keyframe_interval the daemon writes every live
 * process (pid, ppid, comm, exe, argv, cgroup) from /proc as metadata, so
 * any window of the store names the processes it mentions without the
 * rest: a reader takes the keyframe before the window and the exec and
 * fork records inside it.  A fresh scan each time, not a table kept from
 * records: it cannot drift when exit records are lost.
 */
#ifndef FR_KEYFRAME_H
#define FR_KEYFRAME_H

#include "../lib/record.h"

/* Called for each live process; the record's strings live until it returns. */
typedef void (*fr_keyframe_cb)(const struct fr_record *r, void *userdata);

/* Scans /proc; ts (CLOCK_BOOTTIME) goes into every record.  Returns the
 * number of processes or -errno.  @cgroup_mount_fd (or -1) turns
 * /proc/PID/cgroup paths into cgroup ids. */
int fr_keyframe_scan(int cgroup_mount_fd, uint64_t ts, fr_keyframe_cb cb, void *userdata);

/* Fills @r's pid, tid, comm and cgroup id for process @pid from /proc (for
 * records made in user space, such as marks).  Fields stay 0/empty when
 * the process is gone. */
void fr_keyframe_attribute(int cgroup_mount_fd, uint32_t pid, struct fr_record *r);

#endif
