// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process lifecycle: exec (with filename and argv), fork of new processes,
 * and the exit of a whole process (its last thread) with its wait status.
 * Threads are not reported: they would multiply the volume for little
 * post-mortem value, and every record carries its tid anyway.
 */
#include "emit.bpf.h"

SEC("tp_btf/sched_process_exec")
int BPF_PROG(fr_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct fr_event_exec *e;
	unsigned long start, end, len;
	struct fr_slot slot;
	long n;

	if (fr_is_self())
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_PROC, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_EXEC);
	e->ppid = BPF_CORE_READ(p, real_parent, tgid);

	n = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	if (n <= 0)
		n = 1;
	e->filename_len = n - 1;
	if (n == sizeof(e->filename))
		e->hdr.flags |= FR_EXEC_FILENAME_CUT;

	/* The new image's argv is on its stack, written by the kernel during
	 * exec, so it is resident and readable without faulting. */
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > FR_ARGS_LEN) {
		len = FR_ARGS_LEN;
		e->hdr.flags |= FR_EXEC_ARGS_CUT;
	}
	if (len && bpf_probe_read_user(e->args, len, (void *)start))
		len = 0;
	e->args_len = len;
	fr_submit(e, &slot);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fr_fork, struct task_struct *parent, struct task_struct *child)
{
	struct fr_event_fork *e;
	struct fr_slot slot;

	if (fr_is_self())
		return 0;
	/* a new thread, not a new process */
	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_PROC, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_FORK);
	e->child_pid = BPF_CORE_READ(child, tgid);
	e->pad = 0;
	fr_submit(e, &slot);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(fr_exit, struct task_struct *p)
{
	struct fr_event_exit *e;
	struct fr_slot slot;

	if (fr_is_self())
		return 0;
	/* do_exit() has already decremented signal->live: zero means this is
	 * the last thread, i.e. the process is gone.  This is right also when
	 * the group leader exited first. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_PROC, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_EXIT);
	e->exit_code = BPF_CORE_READ(p, exit_code);
	e->pad = 0;
	fr_submit(e, &slot);
	return 0;
}
