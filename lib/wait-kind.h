/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kind of wait an offcpu record is: a latency (something the task
 * needed took long: I/O in D state, a read or recv, an fsync, a page
 * fault) or idle by design (a kernel thread's idle loop, a pool's
 * epoll_wait or futex, a sleep), from what the record holds: the task
 * state it blocked in and the system call.  Reports lead with
 * latencies; idle waits are listed only when they changed.
 */
#ifndef FR_WAIT_KIND_H
#define FR_WAIT_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

/* ps(1)'s letter for an offcpu record's task state: "S" interruptible,
 * "D" uninterruptible, "I" idle (D that does not count as load: a kernel
 * thread's idle loop), "T" stopped, "t" traced, "P" parked; NULL when the
 * record does not say (0: from before it was recorded). */
const char *fr_task_state_name(uint32_t state);

/* Is the offcpu record @r a wait by design rather than a latency?  A
 * kernel thread's: the record says so (r->sched.kthread), or the window
 * knows it (@kernel_thread: the entry's). */
bool fr_wait_is_idle(const struct fr_record *r, bool kernel_thread);

#endif
