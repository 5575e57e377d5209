/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark helper: loads one variant of tests/bench/syscall-variants.bpf.c
 * (its V_enter and V_exit programs, raw_tp sys_enter and sys_exit),
 * attaches it, prints "attached" and holds it until SIGINT or SIGTERM.
 *   syscall-variant OBJECT V
 * The exclusion bitmap is empty: every call is timed.
 */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct bpf_program *p;
	struct bpf_object *obj;
	sigset_t set;
	size_t n;
	int sig, err, attached = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: syscall-variant OBJECT VARIANT\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "syscall-variant: failed to open %s\n", argv[1]);
		return 1;
	}
	n = strlen(argv[2]);
	bpf_object__for_each_program(p, obj) {
		const char *name = bpf_program__name(p);
		bool mine = strncmp(name, argv[2], n) == 0 &&
			    (strcmp(name + n, "_enter") == 0 || strcmp(name + n, "_exit") == 0);
		bpf_program__set_autoload(p, mine);
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "syscall-variant: failed to load: %s\n", strerror(-err));
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		if (!bpf_program__autoload(p))
			continue;
		if (!bpf_program__attach(p)) {
			fprintf(stderr, "syscall-variant: failed to attach %s\n", bpf_program__name(p));
			return 1;
		}
		attached++;
	}
	if (attached != 2) {
		fprintf(stderr, "syscall-variant: no variant %s\n", argv[2]);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
