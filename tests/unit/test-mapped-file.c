/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/mapped-file.c: the file a process maps, opened through
 * /proc/PID/map_files, or by its path once the process is gone, and only
 * if it is the very file mapped; a FIFO put at the path is refused at
 * once, never waited on (issue 42), and a process that exited still has
 * its files opened (its stacks unwound after it is gone). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../daemon/mapped-file.h"
#include "test.h"

/* fd names the same inode as @st */
static int same(int fd, const struct stat *st)
{
	struct stat x;
	int r = fd >= 0 && fstat(fd, &x) == 0 && x.st_dev == st->st_dev && x.st_ino == st->st_ino;

	if (fd >= 0)
		close(fd);
	return r;
}

int main(void)
{
	char dir[] = "/tmp/fr-test-mapped-XXXXXX", path[256], aside[300], cmd[300];
	uint64_t start, end;
	struct stat st;
	pid_t gone;
	void *p;
	int fd;

	alarm(20); /* a FIFO waited on is a failure, not a hang */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	snprintf(aside, sizeof(aside), "%s/lib.so.old", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 4096) == 0 && fstat(fd, &st) == 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	close(fd);
	start = (uint64_t)(uintptr_t)p;
	end = start + 4096;

	/* alive: through map_files */
	CHECK(same(fr_open_mapped_file((uint32_t)getpid(), start, end, NULL, st.st_dev, st.st_ino), &st));
	/* another inode than the maps said: refused */
	CHECK_EQ(fr_open_mapped_file((uint32_t)getpid(), start, end, NULL, st.st_dev, st.st_ino + 1), -ESTALE);

	/* a process that is gone (a reaped child's pid): by its path */
	gone = fork();
	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, NULL, 0) == gone);
	CHECK(same(fr_open_mapped_file((uint32_t)gone, start, end, path, st.st_dev, st.st_ino), &st));
	/* without a path, nothing */
	CHECK_EQ(fr_open_mapped_file((uint32_t)gone, start, end, NULL, st.st_dev, st.st_ino), -ENOENT);
	/* a FIFO at the path: refused at once */
	CHECK(rename(path, aside) == 0 && mkfifo(path, 0666) == 0);
	CHECK_EQ(fr_open_mapped_file((uint32_t)gone, start, end, path, st.st_dev, st.st_ino), -ESTALE);
	/* another regular file there: refused */
	CHECK(unlink(path) == 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(fr_open_mapped_file((uint32_t)gone, start, end, path, st.st_dev, st.st_ino), -ESTALE);
	/* a link to the very file: the file it names is what counts */
	CHECK(unlink(path) == 0 && symlink(aside, path) == 0);
	CHECK(same(fr_open_mapped_file((uint32_t)gone, start, end, path, st.st_dev, st.st_ino), &st));
	/* nothing there */
	CHECK(unlink(path) == 0);
	CHECK_EQ(fr_open_mapped_file((uint32_t)gone, start, end, path, st.st_dev, st.st_ino), -ENOENT);

	munmap(p, 4096);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ(system(cmd), 0);
	return TEST_DONE();
}
