// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark helper (not shipped): pieces of the syscall source
 * (bpf/syscall.bpf.c), each as a raw_tp sys_enter + sys_exit pair, to find
 * where its cost above two empty programs (the floor) goes.  Variant V is
 * the programs V_enter and V_exit; `syscall-variant V` loads and attaches
 * only those (tests/bench/syscall-variant.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct start {
	__u64 ts;
	__u32 nr;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} st SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct start);
} pc SEC(".maps");

__u32 self_tgid = 1;
__u64 threshold_ns = 100000000;
__u64 exclude[FR_SYSCALL_MAX / 64];
__u64 sink; /* keeps results alive */

#define PAIR(name, enter_body, exit_body)                                  \
	SEC("raw_tp/sys_enter")                                            \
	int BPF_PROG(name##_enter, struct pt_regs *regs, long id)          \
	{                                                                  \
		enter_body;                                                \
		return 0;                                                  \
	}                                                                  \
	SEC("raw_tp/sys_exit")                                             \
	int BPF_PROG(name##_exit, struct pt_regs *regs, long ret)          \
	{                                                                  \
		exit_body;                                                 \
		return 0;                                                  \
	}

static __always_inline bool excluded(long id)
{
	__u32 nr = id;

	if (id < 0 || id >= FR_SYSCALL_MAX)
		return true;
	return exclude[(nr / 64) & (FR_SYSCALL_MAX / 64 - 1)] & (1ULL << (nr % 64));
}

static __always_inline struct start *get(__u64 flags)
{
	return bpf_task_storage_get(&st, bpf_get_current_task_btf(), 0, flags);
}

PAIR(empty, , )
PAIR(self, if ((bpf_get_current_pid_tgid() >> 32) == self_tgid) sink = 1,
	   if ((bpf_get_current_pid_tgid() >> 32) == self_tgid) sink = 1)
PAIR(bitmap, if (excluded(id)) sink = 1, )
PAIR(task, sink = (__u64)bpf_get_current_task_btf(), sink = (__u64)bpf_get_current_task_btf())
PAIR(stor, struct start *s = get(BPF_LOCAL_STORAGE_GET_F_CREATE); if (s) s->nr = id,
	   struct start *s = get(0); if (s) sink = s->nr)
PAIR(boot, sink = bpf_ktime_get_boot_ns(), sink = bpf_ktime_get_boot_ns())
PAIR(mono, sink = bpf_ktime_get_ns(), sink = bpf_ktime_get_ns())
PAIR(jiffies, sink = bpf_jiffies64(), sink = bpf_jiffies64())
PAIR(pcpu, __u32 z = 0; struct start *s = bpf_map_lookup_elem(&pc, &z); if (s) s->nr = id,
	   __u32 z = 0; struct start *s = bpf_map_lookup_elem(&pc, &z); if (s) sink = s->nr)
/* the storage get with one clock read on either side */
PAIR(storboot, struct start *s = get(BPF_LOCAL_STORAGE_GET_F_CREATE); if (s) s->ts = bpf_ktime_get_boot_ns(),
	       struct start *s = get(0); if (s && s->ts) sink = bpf_ktime_get_boot_ns() - s->ts)
PAIR(storjiffies, struct start *s = get(BPF_LOCAL_STORAGE_GET_F_CREATE); if (s) s->ts = bpf_jiffies64(),
		  struct start *s = get(0); if (s && s->ts) sink = bpf_jiffies64() - s->ts)

/* the shipped source before this change, without the record (never reached
 * by getppid): self check, bitmap, storage get, two CLOCK_BOOTTIME reads */
PAIR(old,
	if ((bpf_get_current_pid_tgid() >> 32) == self_tgid) return 0;
	if (excluded(id)) return 0;
	struct start *s = get(BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) return 0;
	s->ts = bpf_ktime_get_boot_ns();
	s->nr = id,
	struct start *s = get(0);
	if (!s || !s->ts) return 0;
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 start = s->ts;
	s->ts = 0;
	if (now - start >= threshold_ns) sink = now - start)
