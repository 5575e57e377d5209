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

/* A page of the stack never touched (a large frame that skipped it) is
 * not there to read, and reads here cannot fault it in: @len bytes from
 * @sp page by page, up to the first that does not read; returns how many. */
static __always_inline __u32 fr_copy_pages(__u8 *dst, __u64 sp, __u32 len)
{
	__u64 off = 0, n = 4096 - (sp & 4095);

	for (int i = 0; i <= FR_USTACK_COPY / 4096; i++) {
		if (off >= len)
			break;
		if (n > len - off)
			n = len - off;
		/* bounds the verifier can follow: the compiler keeps them */
		barrier_var(n);
		barrier_var(off);
		if (n == 0 || n > 4096 || off > FR_USTACK_COPY - 4096)
			break;
		if (bpf_probe_read_user(dst + off, n, (const void *)(sp + off)))
			break;
		off += n;
		n = 4096;
	}
	return off;
}

/* The top of the current task's (@task's) user stack from @sp into @dst
 * (FR_USTACK_COPY bytes of room), without faulting: returns how many
 * bytes were copied.  (The mapping lock may be held, the task having
 * faulted: then up to the first page that does not read.) */
static __always_inline __u32 fr_read_ustack(struct task_struct *task, __u8 *dst, __u64 sp)
{
	__u32 len = fr_ustack_len(task, sp);

	if (bpf_probe_read_user(dst, len, (const void *)sp) == 0)
		return len;
	return fr_copy_pages(dst, sp, len);
}

#endif
