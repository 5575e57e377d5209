/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symbolizer against real processes (daemon code, built in from its
 * source): a child forked by a process that then exec'ed, gone before its
 * stack is named, whose fork record was handled before its parent's exec
 * record (two CPUs' rings).  It inherited the old image's maps; its frames
 * in the new image are named from its parent's maps as they are now.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/symbolizer.h"
#include "../../lib/record.h"
#include "test.h"

static uint64_t exe_ino(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* An address inside the executable mapping of @pid's image, and the
 * image's path. */
static uint64_t code_of_image(pid_t pid, char *exe, size_t exe_len)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	uint64_t addr = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, exe_len - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!addr && getline(&line, &cap, f) > 0) {
		unsigned long long start, end;
		char perms[8];
		int pos = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx-%llx %7s %*x %*x:%*x %*u %n", &start, &end, perms, &pos) >= 3 && pos &&
		    perms[2] == 'x' && strcmp(line + pos, exe) == 0)
			addr = start + (end - start) / 2;
	}
	free(line);
	fclose(f);
	return addr;
}

int main(void)
{
	struct fr_symbolizer *s;
	struct fr_frame_desc d;
	char exe[PATH_MAX];
	int go[2], st;
	pid_t parent, dead;
	uint64_t ino_a = exe_ino(getpid()), ino_b = 0, addr;

	CHECK(ino_a != 0);
	CHECK(fr_symbolizer_new(NULL, &s) == 0);
	CHECK(pipe(go) == 0);
	/* the parent: this image until told to exec sleep */
	parent = fork();
	if (parent == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	CHECK(parent > 0);
	close(go[0]);

	/* known in this image: one of its frames named */
	fr_symbolizer_user(s, (uint32_t)parent, ino_a, (uint64_t)(uintptr_t)main + 1, false, &d);
	CHECK_EQ(d.symbol.type, FR_REC_SYMBOL);
	if (d.symbol.type == FR_REC_SYMBOL)
		CHECK_STR(d.symbol.symbol.name, "main");

	/* its child, gone: a pid no process has now */
	dead = fork();
	if (dead == 0)
		_exit(0);
	CHECK(dead > 0 && waitpid(dead, &st, 0) == dead);
	/* the fork record first: the child inherits this image's maps */
	fr_symbolizer_fork(s, (uint32_t)parent, (uint32_t)dead);

	/* then the exec, and its record (which forgets the parent) */
	CHECK(write(go[1], "x", 1) == 1);
	for (int i = 0; i < 500; i++) {
		ino_b = exe_ino(parent);
		if (ino_b && ino_b != ino_a)
			break;
		usleep(10000);
	}
	CHECK(ino_b && ino_b != ino_a);
	usleep(50000); /* the exec is done: its maps are the new image's */
	fr_symbolizer_forget(s, (uint32_t)parent);

	/* the child's stack, taken in the new image */
	addr = code_of_image(parent, exe, sizeof(exe));
	CHECK(addr != 0);
	fr_symbolizer_parent(s, (uint32_t)dead, (uint32_t)parent, ino_b);
	fr_symbolizer_user(s, (uint32_t)dead, ino_b, addr, false, &d);
	CHECK_EQ(d.mapping.type, FR_REC_MAPPING);
	if (d.mapping.type == FR_REC_MAPPING)
		CHECK_STR(d.mapping.mapping.path, exe);

	kill(parent, SIGKILL);
	waitpid(parent, &st, 0);
	close(go[1]);
	fr_symbolizer_free(s);
	return test_failures ? 1 : 0;
}
