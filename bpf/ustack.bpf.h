/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What unwinding a user stack in flightrecd needs (event.h): the user
 * registers in DWARF order and the length of stack worth copying.  Shared
 * by the CPU sampler (profile.bpf.c) and the off-CPU stacks (sched.bpf.c).
 */
#ifndef FR_USTACK_BPF_H
#define FR_USTACK_BPF_H

#include "emit.bpf.h"

/* The user registers @r in DWARF order (event.h).  @r may be another
 * task's (bpf_task_pt_regs): read through CO-RE probes. */
static __always_inline void copy_uregs(__u64 *d, const struct pt_regs *r)
{
	d[0] = BPF_CORE_READ(r, ax);
	d[1] = BPF_CORE_READ(r, dx);
	d[2] = BPF_CORE_READ(r, cx);
	d[3] = BPF_CORE_READ(r, bx);
	d[4] = BPF_CORE_READ(r, si);
	d[5] = BPF_CORE_READ(r, di);
	d[6] = BPF_CORE_READ(r, bp);
	d[7] = BPF_CORE_READ(r, sp);
	d[8] = BPF_CORE_READ(r, r8);
	d[9] = BPF_CORE_READ(r, r9);
	d[10] = BPF_CORE_READ(r, r10);
	d[11] = BPF_CORE_READ(r, r11);
	d[12] = BPF_CORE_READ(r, r12);
	d[13] = BPF_CORE_READ(r, r13);
	d[14] = BPF_CORE_READ(r, r14);
	d[15] = BPF_CORE_READ(r, r15);
	d[16] = BPF_CORE_READ(r, ip);
}

struct fr_vma_end {
	__u64 end;
};

static long fr_stack_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct fr_vma_end *)data)->end = vma->vm_end;
	return 0;
}

/* How many bytes of @task's stack from @sp to copy: up to the end of the
 * stack's mapping (a read that crosses it fails whole), at most
 * FR_USTACK_COPY; FR_USTACK_COPY when the mapping cannot be looked up
 * (its lock held). */
static __always_inline __u32 fr_ustack_len(struct task_struct *task, __u64 sp)
{
	struct fr_vma_end ve = {};
	__u32 len = FR_USTACK_COPY;

	if (bpf_find_vma(task, sp, fr_stack_vma_end, &ve, 0) == 0 && ve.end > sp && ve.end - sp < FR_USTACK_COPY)
		len = ve.end - sp;
	if (len > FR_USTACK_COPY)
		len = FR_USTACK_COPY;
	return len;
}

#endif
