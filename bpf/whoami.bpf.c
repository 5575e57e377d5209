// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Who the daemon is to the kernel: its tgid in the initial PID namespace,
 * the pid every other program records and filters on (fr_is_self()).  In a
 * container's PID namespace getpid() and /proc/self/status (NSpid) give
 * only the namespace's numbers.  The daemon runs fr_whoami once with
 * BPF_PROG_TEST_RUN, which runs a raw_tp program in the calling task (no
 * BPF_F_TEST_RUN_ON_CPU), so the current task is the daemon itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* outputs */
__u32 tgid;

SEC("raw_tp")
int fr_whoami(void *ctx)
{
	tgid = bpf_get_current_pid_tgid() >> 32;
	return 0;
}
