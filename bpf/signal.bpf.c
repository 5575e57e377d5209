// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fatal signals as they are generated: the target, the sender, the signal,
 * the fault address, and the stacks of the task generating it (event.h).
 * Only signals in the sigmask input (default SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGABRT, SIGKILL, SIGSYS) are recorded.  A storm of them (a
 * supervisor killing thousands of workers) keeps every record; stacks past
 * stack_budget a second on a CPU are skipped, and the record says so. */
#include "emit.bpf.h"
#include "stack-budget.bpf.h"
#include "ustack.bpf.h"
#include "python.bpf.h"

#define SIGILL 4
#define SIGTRAP 5
#define SIGBUS 7
#define SIGFPE 8
#define SIGSEGV 11
#define PF_KTHREAD 0x00200000

/* inputs: bit n = signal n */
__u64 sigmask = (1ULL << 11) | (1ULL << 7) | (1ULL << 4) | (1ULL << 8) | (1ULL << 6) | (1ULL << 9) | (1ULL << 31);
/* stacks per CPU per second; 0: none */
__u32 stack_budget = 32;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_stack_budget);
} budget SEC(".maps");

#define SI_KERNEL 0x80

/* A signal the kernel sends on a fault (si_code > 0: SEGV_MAPERR,
 * BUS_ADRALN, FPE_INTDIV, ...; SI_KERNEL for a general protection
 * fault)? */
static __always_inline bool is_fault(int sig, int code)
{
	return code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP);
}

/* The fields of a signal record; @code: si_code. */
static __always_inline void fill(struct fr_event_signal *e, struct task_struct *target, struct task_struct *cur,
				 int sig, int code, __u64 addr, int result, __u64 now, __u16 stack)
{
	fr_fill_hdr_task(&e->hdr, FR_EV_SIGNAL, target, now);
	e->sig = sig;
	e->sender_pid = cur->tgid;
	e->sender_tid = cur->pid;
	e->code = code;
	e->result = result;
	__builtin_memcpy(e->sender_comm, cur->comm, sizeof(e->sender_comm));
	e->stack = stack;
	e->addr = 0;
	/* si_addr is the fault address but for SI_KERNEL's */
	if (is_fault(sig, code) && code != SI_KERNEL) {
		e->addr = addr;
		e->hdr.flags |= FR_SIGNAL_ADDR;
	}
	e->exe_ino = 0;
	e->ppid = 0;
	e->ustack_len = 0;
	e->kernel_frames = 0;
	__builtin_memset(e->uregs, 0, sizeof(e->uregs));
}

SEC("tp_btf/signal_generate")
int BPF_PROG(fr_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fr_event_signal *e;
	struct fr_py_scratch *py;
	struct fr_slot slot;
	__u64 now, addr = 0;
	__u32 zero = 0;
	int code;
	long n;

	if (sig <= 0 || sig >= 64 || !(sigmask & (1ULL << sig)))
		return 0;
	now = bpf_ktime_get_boot_ns();
	/* SEND_SIG_NOINFO (0): from user space; SEND_SIG_PRIV (1): from the kernel */
	if ((unsigned long)info == 0) {
		code = 0; /* SI_USER */
	} else if ((unsigned long)info == 1) {
		code = 0x80; /* SI_KERNEL */
	} else {
		code = BPF_CORE_READ(info, si_code);
		addr = (__u64)BPF_CORE_READ(info, _sifields._sigfault._addr);
	}
	if (!fr_stack_allowed(&budget, now, stack_budget)) {
		e = fr_reserve(sizeof(*e), FR_SRC_SIGNAL, &slot);
		if (!e)
			return 0;
		fill(e, task, cur, sig, code, addr, result, now, FR_SIGNAL_STACK_SKIPPED);
		fr_submit_now(e);
		return 0;
	}
	if (!cur->mm || (cur->flags & PF_KTHREAD)) {
		e = fr_reserve(sizeof(*e), FR_SRC_SIGNAL, &slot);
		if (!e)
			return 0;
		fill(e, task, cur, sig, code, addr, result, now, FR_SIGNAL_STACK_KERNEL);
	} else {
		/* first: the descriptions of its Python code objects go into
		 * the ring before the record that needs them */
		py = bpf_map_lookup_elem(&py_scratch, &zero);
		if (!py)
			return 0;
		fr_py_walk(cur, py);
		e = fr_reserve(sizeof(*e) + FR_USTACK_COPY + sizeof(struct fr_py_stack), FR_SRC_SIGNAL, &slot);
		if (!e)
			return 0;
		fill(e, task, cur, sig, code, addr, result, now, FR_SIGNAL_STACK_COPIED);
		bpf_probe_read_kernel(e->ustack + FR_USTACK_COPY, sizeof(struct fr_py_stack), &py->st);
		e->exe_ino = BPF_CORE_READ(cur, mm, exe_file, f_inode, i_ino);
		e->ppid = BPF_CORE_READ(cur, real_parent, tgid);
		copy_uregs(e->uregs, (const struct pt_regs *)bpf_task_pt_regs(cur));
		e->ustack_len = fr_read_ustack(cur, e->ustack, e->uregs[7]);
	}
	/* A fault's kernel stack is the fault handler's, which the signal
	 * and si_code say already; without it the first frame is the
	 * faulting instruction itself, not a return address.  Else from
	 * the kernel's signal code: not this program and its caller. */
	if (!(is_fault(sig, code) && cur == task)) {
		n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 2 & BPF_F_SKIP_FIELD_MASK);
		e->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	}
	/* the sender may be gone soon (a crash): the daemon reads its
	 * mappings now */
	fr_submit_now(e);
	return 0;
}
