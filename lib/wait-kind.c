/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "macro.h"
#include "syscall-names.h"
#include "wait-kind.h"

const char *fr_task_state_name(uint32_t state)
{
	/* include/linux/sched.h: the flags over the base state first */
	if ((state & FR_TASK_NOLOAD) && (state & FR_TASK_UNINTERRUPTIBLE))
		return "I";
	if (state & FR_TASK_UNINTERRUPTIBLE)
		return "D";
	if (state & FR_TASK_INTERRUPTIBLE)
		return "S";
	if (state & 0x0004)
		return "T";
	if (state & 0x0008)
		return "t";
	if (state & 0x0040)
		return "P";
	return NULL;
}

/* The calls a task waits in when it has nothing to do: an event loop, a
 * pool's condition variable, a sleep, a parent waiting for children, a
 * server waiting for a connection. */
static const char *const idle_calls[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll",    "ppoll",      "select",    "pselect6",
	"nanosleep",  "clock_nanosleep", "pause",    "wait4",   "waitid",     "futex",     "futex_waitv",
	"rt_sigsuspend", "rt_sigtimedwait", "accept", "accept4",
};

bool fr_wait_is_idle(const struct fr_record *r, bool kernel_thread)
{
	const char *call;

	if (r->type != FR_REC_OFFCPU)
		return false;
	/* D that counts as load: the task needs what it waits for */
	if ((r->sched.state & FR_TASK_UNINTERRUPTIBLE) && !(r->sched.state & FR_TASK_NOLOAD))
		return false;
	if (r->sched.state & FR_TASK_NOLOAD)
		return true;
	if (kernel_thread || r->sched.kthread)
		return true;
	if (r->sched.syscall_nr < 0)
		return false; /* a user task blocked outside a call: a page fault */
	call = fr_syscall_name((unsigned)r->sched.syscall_nr);
	for (size_t i = 0; call && i < ELEMENTSOF(idle_calls); i++)
		if (strcmp(call, idle_calls[i]) == 0)
			return true;
	return false;
}
