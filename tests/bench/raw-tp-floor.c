/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark helper: the floor under the syscall source.  Loads two empty
 * BPF_PROG_TYPE_RAW_TRACEPOINT programs (r0 = 0; exit), attaches them to
 * the sys_enter and sys_exit raw tracepoints, the hooks and program type
 * bpf/syscall.bpf.c uses, prints "attached" and holds them until SIGINT or
 * SIGTERM.  Whatever a system call pays with these attached is the price of
 * being hooked at all (the syscall slow path and the tracepoint dispatch),
 * before any program does work.  bpftrace 0.17 has no rawtracepoint probes,
 * hence this program.
 *   raw-tp-floor          empty programs
 *   raw-tp-floor clock    each reads CLOCK_BOOTTIME (bpf_ktime_get_boot_ns)
 *                         and nothing else: the syscall source's two clock
 *                         reads, to split its cost above the floor
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const struct bpf_insn empty[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const struct bpf_insn clock[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_boot_ns },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	bool with_clock = argc > 1 && strcmp(argv[1], "clock") == 0;
	static const char *const tps[] = { "sys_enter", "sys_exit" };
	sigset_t set;
	int sig, i;

	/* blocked before attaching, so a signal that arrives early still ends us */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < 2; i++) {
		int prog, link;

		prog = with_clock ? bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "fr_floor_clock", "GPL", clock, 3, NULL)
				  : bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "fr_floor", "GPL", empty, 2, NULL);
		if (prog < 0) {
			fprintf(stderr, "raw-tp-floor: failed to load a program: %s\n", strerror(-prog));
			return 1;
		}
		link = bpf_raw_tracepoint_open(tps[i], prog);
		if (link < 0) {
			fprintf(stderr, "raw-tp-floor: failed to attach to %s: %s\n", tps[i], strerror(-link));
			return 1;
		}
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
