/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who woke a wait, as readers name it (waker.h). */
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "waker.h"

static bool named(const struct fr_frame *f, const char *name)
{
	size_t n = strlen(name);

	return f->kernel && f->sym && f->sym_len == n && memcmp(f->sym, name, n) == 0;
}

static bool prefixed(const struct fr_frame *f, const char *prefix)
{
	size_t n = strlen(prefix);

	return f->kernel && f->sym && f->sym_len >= n && memcmp(f->sym, prefix, n) == 0;
}

static bool named_any(const struct fr_frame *f, const char *const *names)
{
	for (const char *const *p = names; *p; p++)
		if (named(f, *p))
			return true;
	return false;
}

/* The first frame of [@from, @n) named one of @names: its index, or -1. */
static int find(const struct fr_frame *frames, int from, int n, const char *const *names)
{
	for (int i = from; i < n; i++)
		if (named_any(&frames[i], names))
			return i;
	return -1;
}

int fr_waker_machinery(const struct fr_frame *frames, int n)
{
	static const char *const prefixes[] = { "try_to_wake_up", "wake_up_", "__wake_up", "autoremove_wake_function",
						"default_wake_function", "woken_wake_function", "wake_page_function",
						"wake_bit_function", "var_wake_function", NULL };
	int k = 0;

	for (; k < n; k++) {
		const char *const *p = prefixes;
		for (; *p && !prefixed(&frames[k], *p); p++)
			;
		if (!*p)
			break;
	}
	return k;
}

/* what runs softirqs: the frame below is the action */
static const char *const softirq_runners[] = { "handle_softirqs", "__do_softirq", NULL };

unsigned fr_waker_context(const struct fr_record_waker *k, const struct fr_frame *frames, int n)
{
	static const char *const syscalls[] = { "do_syscall_64", "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64",
						NULL };
	static const char *const faults[] = { "exc_page_fault", "asm_exc_page_fault", NULL };
	static const char *const kthreads[] = { "ret_from_fork", "kthread", "run_ksoftirqd", NULL };
	bool softirq = false;

	if (k->context != FR_WAKER_IS_TASK && k->context != FR_WAKER_IS_KTHREAD && k->context != FR_WAKER_IS_HARDIRQ &&
	    k->context != FR_WAKER_IS_UNKNOWN)
		return k->context;
	/* from the wakeup outwards, to where the kernel was entered */
	for (int i = 0; frames && i < n; i++) {
		const struct fr_frame *f = &frames[i];

		if (named_any(f, softirq_runners))
			softirq = true;
		else if (prefixed(f, "asm_exc_nmi") || named(f, "exc_nmi"))
			return FR_WAKER_IS_NMI;
		else if (prefixed(f, "asm_sysvec_") || prefixed(f, "sysvec_") || prefixed(f, "__sysvec_") ||
			 prefixed(f, "asm_common_interrupt") || named(f, "common_interrupt") ||
			 named(f, "__common_interrupt") || named(f, "irq_exit_rcu") || named(f, "__irq_exit_rcu"))
			return softirq ? FR_WAKER_IS_SOFTIRQ : FR_WAKER_IS_HARDIRQ;
		else if (named_any(f, syscalls) || named_any(f, faults))
			/* a softirq a task ran as it enabled them again (a
			 * send over loopback) is that task's doing */
			return k->context == FR_WAKER_IS_UNKNOWN ? FR_WAKER_IS_TASK : k->context;
		else if (named_any(f, kthreads))
			return softirq ? FR_WAKER_IS_SOFTIRQ : k->context;
	}
	return softirq ? FR_WAKER_IS_SOFTIRQ : k->context;
}

/* What woke, in readers' terms (kind names below), and the frame that
 * names it (*@at: the handler, action or timer function; -1: none). */
enum what { W_NONE, W_TASK, W_KTHREAD, W_IRQ, W_SOFTIRQ, W_TIMER, W_IPI, W_NMI, W_UNKNOWN, W__MAX };
static const char *const what_names[W__MAX] = {
	[W_TASK] = "task", [W_KTHREAD] = "kernel_thread", [W_IRQ] = "irq", [W_SOFTIRQ] = "softirq",
	[W_TIMER] = "timer", [W_IPI] = "ipi", [W_NMI] = "nmi", [W_UNKNOWN] = "unknown",
};

static enum what classify(const struct fr_record_waker *k, const struct fr_frame *frames, int n, int *at)
{
	/* a timer's expiry: the frame below runs the timer's function,
	 * named unless it only wakes a sleeper */
	static const char *const timer_runners[] = { "__hrtimer_run_queues", "call_timer_fn", NULL };
	static const char *const sleeps[] = { "hrtimer_wakeup", "process_timeout", NULL };
	/* what calls a device's handler, or another CPU's queued work */
	static const char *const irq[] = { "__handle_irq_event_percpu", "handle_irq_event_percpu", NULL };
	static const char *const ipi[] = { "__flush_smp_call_function_queue", "flush_smp_call_function_queue",
					   "generic_smp_call_function_single_interrupt", NULL };
	unsigned context = fr_waker_context(k, frames, n);
	enum what w;

	*at = -1;
	if (!frames)
		n = 0;
	switch (context) {
	case FR_WAKER_IS_TASK: return W_TASK;
	case FR_WAKER_IS_KTHREAD: return W_KTHREAD;
	case FR_WAKER_IS_NMI: return W_NMI;
	case FR_WAKER_IS_HARDIRQ:
	case FR_WAKER_IS_SOFTIRQ:
		if ((*at = find(frames, 0, n, timer_runners)) >= 0)
			w = W_TIMER;
		else if (context == FR_WAKER_IS_HARDIRQ && (*at = find(frames, 0, n, irq)) >= 0)
			w = W_IRQ;
		else if (context == FR_WAKER_IS_SOFTIRQ && (*at = find(frames, 0, n, softirq_runners)) >= 0)
			w = W_SOFTIRQ;
		else if (find(frames, 0, n, ipi) >= 0)
			return W_IPI;
		else
			return context == FR_WAKER_IS_HARDIRQ ? W_IRQ : W_SOFTIRQ;
		/* the function it ran: not the wakeup itself, nor a sleep's end */
		if (*at <= 1 || !frames[*at - 1].sym || !frames[*at - 1].kernel || named_any(&frames[*at - 1], sleeps))
			*at = -1;
		else
			(*at)--;
		return w;
	case FR_WAKER_IS_UNKNOWN: return W_UNKNOWN;
	default: return W_NONE;
	}
}

const char *fr_waker_kind(const struct fr_record_waker *k, const struct fr_frame *frames, int n)
{
	int at;

	return what_names[classify(k, frames, n, &at)];
}

bool fr_waker_is_thread(const struct fr_record_waker *k, const struct fr_frame *frames, int n)
{
	int at;
	enum what w = classify(k, frames, n, &at);

	return w == W_TASK || w == W_KTHREAD;
}

size_t fr_waker_label(const struct fr_record_waker *k, const struct fr_frame *frames, int n, char *buf, size_t cap)
{
	int at, len;
	enum what w = classify(k, frames, n, &at);

	switch (w) {
	case W_KTHREAD:
		len = snprintf(buf, cap, "[%s] %.*s",
			       k->comm_len >= 7 && memcmp(k->comm, "kworker", 7) == 0 ? "kworker" : "kthread",
			       (int)k->comm_len, k->comm);
		break;
	case W_IRQ:
	case W_SOFTIRQ:
	case W_TIMER:
	case W_IPI:
	case W_NMI:
		if (at >= 0)
			len = snprintf(buf, cap, "[%s] %.*s", what_names[w], (int)frames[at].sym_len, frames[at].sym);
		else
			len = snprintf(buf, cap, "[%s]", what_names[w]);
		break;
	case W_TASK:
	case W_UNKNOWN:
	case W_NONE:
	case W__MAX:
	default:
		len = snprintf(buf, cap, "%.*s", (int)k->comm_len, k->comm);
		break;
	}
	if (len < 0)
		len = 0;
	return MIN((size_t)len, cap ? cap - 1 : 0);
}
