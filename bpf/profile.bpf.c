// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPU sampling: a perf_event program run at a low frequency on every CPU
 * (hardware cycles where the PMU has them, else the cpu-clock software
 * event) records the interrupted task's kernel and user stacks.  User
 * stacks are walked by frame pointers: binaries built without them give
 * short user stacks.  The idle task and the daemon are not sampled.  The
 * executable's inode tells user space which image the user frames belong
 * to (a sample taken before an exec must not be named after the new one).
 */
#include "emit.bpf.h"

SEC("perf_event")
int fr_sample(struct bpf_perf_event_data *ctx)
{
	struct fr_event_sample *e;
	struct task_struct *task;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct fr_slot slot;
	long n;

	if ((__u32)pid_tgid == 0 || fr_is_self())
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_SAMPLE, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_SAMPLE);
	n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	e->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	n = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	e->user_frames = n > 0 ? (__u64)n / 8 : 0;
	e->pad = 0;
	task = (struct task_struct *)bpf_get_current_task();
	e->exe_ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
	fr_submit(e, &slot);
	return 0;
}
