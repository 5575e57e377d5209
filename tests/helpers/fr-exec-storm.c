/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test workload: N execs of /bin/true, each with a 480-byte argument of
 * random bytes, so the store receives about half a kilobyte of
 * incompressible data per exec.
 *   fr-exec-storm N
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
	long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	char arg[481];

	if (n <= 0) {
		fprintf(stderr, "usage: fr-exec-storm N\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		char *args[] = { "true", arg, NULL };
		pid_t pid;

		if (getrandom(arg, sizeof(arg) - 1, 0) != (ssize_t)sizeof(arg) - 1)
			return 1;
		for (size_t k = 0; k < sizeof(arg) - 1; k++)
			if (!arg[k])
				arg[k] = 1;
		arg[sizeof(arg) - 1] = 0;
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0)
			return 1;
		waitpid(pid, NULL, 0);
	}
	return 0;
}
