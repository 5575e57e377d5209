// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPU sampling: a perf_event program run at a low frequency on every CPU
 * (hardware cycles where the PMU has them, else the cpu-clock software
 * event) records the interrupted task's kernel stack, its user registers
 * and the top of its user stack; flightrecd unwinds the user stack with
 * the binaries' unwind tables at the next drain (event.h says why).  The
 * idle task, the daemon and its stack parser (helper_tgid) are not sampled.  The executable's inode tells
 * user space which image the user frames belong to (a sample taken before
 * an exec must not be named after the new one).
 *
 * A process's first sample wakes the daemon at once: it reads the
 * process's mappings then, so a process that runs for 50 ms and exits
 * before the next drain still has its stack unwound and named.
 */
#include "emit.bpf.h"
#include "ustack.bpf.h"
#include "python.bpf.h"

/* Processes sampled before, and the image they ran: 16 Ki entries, least
 * recently used first out (a busy build host runs a few thousand). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

/* The registers a perf_event program's context holds: x86-64's UAPI
 * struct pt_regs (bpf_user_pt_regs_t), a fixed layout (vmlinux.h's
 * kernel pt_regs has since made cs a 2-byte union member, and the
 * verifier takes only 8-byte loads of the context's registers). */
struct fr_ctx_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* The registers the sample interrupted, loaded from the context itself:
 * the verifier turns these loads into reads of the event's saved
 * registers.  (A probe read at &ctx->regs reads the kernel's context
 * struct, which holds a pointer to them, not them: until 2026-12 the
 * sampler took its user_mode, and then its user registers, from there:
 * bytes of the kernel stack.) */
static __always_inline void copy_ctx_regs(__u64 *d, const struct fr_ctx_regs *r)
{
	d[0] = r->ax;
	d[1] = r->dx;
	d[2] = r->cx;
	d[3] = r->bx;
	d[4] = r->si;
	d[5] = r->di;
	d[6] = r->bp;
	d[7] = r->sp;
	d[8] = r->r8;
	d[9] = r->r9;
	d[10] = r->r10;
	d[11] = r->r11;
	d[12] = r->r12;
	d[13] = r->r13;
	d[14] = r->r14;
	d[15] = r->r15;
	d[16] = r->ip;
}

SEC("perf_event")
int fr_sample(struct bpf_perf_event_data *ctx)
{
	const struct fr_ctx_regs *regs = (const void *)&ctx->regs;
	struct fr_event_sample *e;
	struct task_struct *task;
	__u64 pid_tgid = bpf_get_current_pid_tgid(), *known;
	__u32 tgid = pid_tgid >> 32, zero = 0;
	struct fr_py_scratch *py;
	__u64 ino;
	struct fr_slot slot;
	bool first = false;
	long n;

	if ((__u32)pid_tgid == 0 || fr_is_self() || (helper_tgid && tgid == helper_tgid))
		return 0;
	task = bpf_get_current_task_btf();
	/* no room above the headroom: neither the sample nor the Python
	 * descriptions that would go before it (each ~1.6 KiB, through
	 * fr_reserve_aux, which has no headroom of its own) */
	if (fr_bulk_refused(sizeof(*e), FR_SRC_SAMPLE))
		return 0;
	/* first: the descriptions of its code objects go into the ring
	 * before the sample that needs them */
	py = bpf_map_lookup_elem(&py_scratch, &zero);
	if (py && task->mm)
		fr_py_walk(task, py);
	e = fr_reserve_bulk(sizeof(*e), FR_SRC_SAMPLE, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_SAMPLE);
	n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	e->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	if (py && task->mm)
		bpf_probe_read_kernel(&e->py, sizeof(e->py), &py->st);
	else
		__builtin_memset(&e->py, 0, 8);
	/* also the map value below: Linux 6.1's verifier takes a value from
	 * the stack or a map, not from ring-buffer memory (alloc_mem) */
	ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
	e->exe_ino = ino;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->exe_dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev);
	e->user_mode = (regs->cs & 3) == 3;
	e->ustack_len = 0;
	if (!ino) { /* a kernel thread: no user stack */
		__builtin_memset(e->uregs, 0, sizeof(e->uregs));
		fr_submit(e, &slot);
		return 0;
	}
	/* interrupted in user mode: those registers; in the kernel: the ones
	 * saved where the task entered it */
	if (e->user_mode)
		copy_ctx_regs(e->uregs, regs);
	else
		copy_uregs(e->uregs, (const struct pt_regs *)bpf_task_pt_regs(task));
	e->ustack_len = fr_read_ustack(task, e->ustack, e->uregs[7]);
	known = bpf_map_lookup_elem(&seen, &tgid);
	if (!known || *known != ino) {
		bpf_map_update_elem(&seen, &tgid, &ino, BPF_ANY);
		first = true;
	}
	if (first)
		fr_submit_now(e);
	else
		fr_submit(e, &slot);
	return 0;
}
