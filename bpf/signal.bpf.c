// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fatal signals as they are generated: the target, the sender, the signal.
 * Only signals in the sigmask input (default SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGABRT, SIGKILL, SIGSYS) are recorded. */
#include "emit.bpf.h"

/* inputs: bit n = signal n */
__u64 sigmask = (1ULL << 11) | (1ULL << 7) | (1ULL << 4) | (1ULL << 8) | (1ULL << 6) | (1ULL << 9) | (1ULL << 31);

SEC("tp_btf/signal_generate")
int BPF_PROG(fr_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct fr_event_signal *e;
	__u64 pid_tgid;
	struct fr_slot slot;

	if (sig <= 0 || sig >= 64 || !(sigmask & (1ULL << sig)))
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_SIGNAL, &slot);
	if (!e)
		return 0;
	fr_fill_hdr_task(&e->hdr, FR_EV_SIGNAL, task, bpf_ktime_get_boot_ns());
	pid_tgid = bpf_get_current_pid_tgid();
	e->sig = sig;
	e->sender_pid = pid_tgid >> 32;
	e->code = info ? BPF_CORE_READ(info, si_code) : 0;
	e->result = result;
	bpf_get_current_comm(e->sender_comm, sizeof(e->sender_comm));
	fr_submit(e, &slot);
	return 0;
}
