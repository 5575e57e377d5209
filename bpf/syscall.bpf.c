// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Slow system calls.  sys_enter stamps the start time in task storage (no
 * hash map: ~220 ns cheaper per call, KERNEL-FACTS); sys_exit emits a record
 * only when the call took longer than threshold_ns, so user space sees only
 * what is worth keeping.  Calls that block by design (epoll_wait, futex, …)
 * are excluded at sys_enter through a bitmap and cost one test.
 */
#include "emit.bpf.h"

struct fr_sys_start {
	__u64 ts;
	__u32 nr;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fr_sys_start);
} sys_start SEC(".maps");

/* inputs */
__u64 threshold_ns = 100000000;
__u64 exclude[FR_SYSCALL_MAX / 64];

SEC("raw_tp/sys_enter")
int BPF_PROG(fr_sys_enter, struct pt_regs *regs, long id)
{
	struct fr_sys_start *s;
	struct fr_counters *c;
	__u32 nr;

	if (fr_is_self())
		return 0;
	if (id < 0 || id >= FR_SYSCALL_MAX)
		return 0;
	nr = id;
	if (exclude[(nr / 64) & (FR_SYSCALL_MAX / 64 - 1)] & (1ULL << (nr % 64)))
		return 0;
	s = bpf_task_storage_get(&sys_start, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		c = fr_counters(FR_SRC_SYSCALL);
		if (c)
			c->untracked++;
		return 0;
	}
	s->ts = bpf_ktime_get_boot_ns();
	s->nr = nr;
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(fr_sys_exit, struct pt_regs *regs, long ret)
{
	struct fr_event_syscall *e;
	struct fr_sys_start *s;
	__u64 now, start;
	struct fr_slot slot;
	__u32 nr;

	/* no self check: sys_enter never creates state for our own threads */
	s = bpf_task_storage_get(&sys_start, bpf_get_current_task_btf(), 0, 0);
	if (!s || !s->ts)
		return 0;
	now = bpf_ktime_get_boot_ns();
	start = s->ts;
	nr = s->nr;
	s->ts = 0;
	if (now - start < threshold_ns)
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_SYSCALL, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_SYSCALL);
	/* The record's time is the start of the call: that is when the
	 * thread began waiting, and what a timeline should show. */
	e->hdr.ts = start;
	e->duration_ns = now - start;
	e->ret = ret;
	e->nr = nr;
	e->pad = 0;
	fr_submit(e, &slot);
	return 0;
}
