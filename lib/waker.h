/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who woke a wait (an offcpu record's waker, record.h), as readers name
 * it: its kind (JSON's waker.kind) and a label people read, from the
 * context the program saw, the task's name and the kernel frames of the
 * wakeup:
 *   a task                "nginx"
 *   a kernel thread       "[kworker] kworker/1:2", "[kthread] jbd2/vda1-8"
 *   a timer's expiry      "[timer]" (a sleep's end), "[timer] watchdog_timer_fn"
 *   a device's interrupt  "[irq] vring_interrupt" (its handler)
 *   another CPU's request "[ipi]"
 *   a softirq             "[softirq] net_rx_action" (its action)
 * An interrupt's task is only the one it interrupted: the label does not
 * name it.
 */
#ifndef FR_WAKER_H
#define FR_WAKER_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"
#include "symtab.h"


/* How many of a waker's first frames are the wakeup's own machinery
 * (try_to_wake_up, __wake_up_common, autoremove_wake_function, ...),
 * which say nothing of who woke: printed stacks start after them. */
int fr_waker_machinery(const struct fr_frame *frames, int n);

/* What waker @k is, from its context and its frames (kernel first, leaf
 * first: @frames[0..n), NULL: not named): the program tells a task's
 * stack from an interrupt's, the frames a softirq from a hard interrupt,
 * and an interrupt that came in user mode from a fault. */
unsigned fr_waker_context(const struct fr_record_waker *k, const struct fr_frame *frames, int n);

/* What waker @k is, as JSON's waker.kind says: "task", "kernel_thread",
 * "irq", "softirq", "timer", "ipi", "nmi", "unknown"; NULL for none. */
const char *fr_waker_kind(const struct fr_record_waker *k, const struct fr_frame *frames, int n);
/* Was it a thread (a task or a kernel thread), not an interrupt? */
bool fr_waker_is_thread(const struct fr_record_waker *k, const struct fr_frame *frames, int n);

/* The label of waker @k, whose frames (kernel first, leaf first) are
 * @frames[0..n) (NULL: not named), into @buf; returns its length (cut to
 * @cap - 1, NUL-terminated). */
size_t fr_waker_label(const struct fr_record_waker *k, const struct fr_frame *frames, int n, char *buf, size_t cap);

#endif
