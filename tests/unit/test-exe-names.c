/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pid -> executable (daemon/exe-names.c) when the records come out of
 * order, as they do across CPUs: a shell's exec drained after the exec it
 * made next (sh -c 'exec prog' with the two on different CPUs) must not
 * name the program's crash after the shell (issue 41: seen on 6.1 in the
 * kernel matrix, and once on 6.18). */
#include <string.h>

#include "../../daemon/exe-names.h"
#include "test.h"

static struct fr_record rec(uint16_t type, uint32_t pid, uint64_t ts)
{
	return (struct fr_record){ .type = type, .pid = pid, .ts = ts };
}

static struct fr_record exec_rec(uint32_t pid, uint64_t ts, const char *file)
{
	struct fr_record r = rec(FR_REC_EXEC, pid, ts);

	r.exec.filename = file;
	r.exec.filename_len = (uint32_t)strlen(file);
	return r;
}

int main(void)
{
	struct fr_exe_names *x;
	struct fr_record r;

	CHECK_EQ(fr_exe_names_new(&x), 0);
	r = exec_rec(10, 100, "/usr/bin/bash");
	CHECK(fr_exe_names_on_record(x, &r));
	r = rec(FR_REC_FORK, 10, 200);
	r.fork.child_pid = 11;
	CHECK(fr_exe_names_on_record(x, &r));
	CHECK_STR(fr_exe_names_get(x, 11), "/usr/bin/bash");

	/* the program's exec drained first, the shell's after it */
	r = exec_rec(11, 400, "/opt/app/crasher");
	CHECK(fr_exe_names_on_record(x, &r));
	r = exec_rec(11, 300, "/usr/bin/sh");
	CHECK(!fr_exe_names_on_record(x, &r));
	CHECK_STR(fr_exe_names_get(x, 11), "/opt/app/crasher");
	/* a fork record drained after the child's exec: the child runs
	 * what it exec'd */
	r = exec_rec(12, 600, "/usr/bin/true");
	CHECK(fr_exe_names_on_record(x, &r));
	r = rec(FR_REC_FORK, 10, 500);
	r.fork.child_pid = 12;
	CHECK(!fr_exe_names_on_record(x, &r));
	CHECK_STR(fr_exe_names_get(x, 12), "/usr/bin/true");
	/* in order, each exec names it */
	r = exec_rec(11, 700, "/usr/bin/env");
	CHECK(fr_exe_names_on_record(x, &r));
	CHECK_STR(fr_exe_names_get(x, 11), "/usr/bin/env");

	fr_exe_names_free(x);
	return TEST_DONE();
}
