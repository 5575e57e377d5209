/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "parse-sandbox.h"
#include "sanitized.h"


static int limit(int resource, rlim_t v)
{
	struct rlimit rl = { v, v };

	return setrlimit(resource, &rl) < 0 ? -errno : 0;
}

static int limits(void)
{
	int r = 0;

#ifndef FR_SANITIZED
	if (r == 0)
		r = limit(RLIMIT_DATA, FR_PARSE_DATA_MAX);
	if (r == 0)
		r = limit(RLIMIT_AS, FR_PARSE_AS_MAX);
#endif
	if (r == 0)
		r = limit(RLIMIT_NOFILE, FR_PARSE_FILES_MAX);
	if (r == 0)
		r = limit(RLIMIT_FSIZE, 0);
	if (r == 0)
		r = limit(RLIMIT_CORE, 0);
	if (r == 0)
		r = limit(RLIMIT_NPROC, 0);
	return r;
}

static int drop_capabilities(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* no libcap among our dependencies: the system call itself */
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

/* What reading files by descriptor, libelf/libdw and glibc's malloc,
 * qsort and stdio need. */
static const int allowed[] = {
	SCMP_SYS(read),	     SCMP_SYS(pread64),	 SCMP_SYS(readv),	  SCMP_SYS(write),
	SCMP_SYS(writev),    SCMP_SYS(recvmsg),	 SCMP_SYS(sendmsg),	  SCMP_SYS(recvfrom),
	SCMP_SYS(sendto),    SCMP_SYS(close),
	SCMP_SYS(fstat),     SCMP_SYS(newfstatat), SCMP_SYS(statx),	  SCMP_SYS(lseek),
	SCMP_SYS(fcntl),     SCMP_SYS(munmap),	 SCMP_SYS(mremap),	  SCMP_SYS(madvise),
	SCMP_SYS(brk),	     SCMP_SYS(futex),	 SCMP_SYS(getpid),	  SCMP_SYS(gettid),
	SCMP_SYS(getppid),   SCMP_SYS(getrandom), SCMP_SYS(sysinfo),	  SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(sched_yield), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(exit),	     SCMP_SYS(exit_group),
};

static int seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* memory, but never executable */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int fr_parse_sandbox_enter(const char **what)
{
	int r;

	*what = "resource limits";
	r = limits();
	if (r < 0)
		return r;
	*what = "capabilities";
	r = drop_capabilities();
	if (r < 0)
		return r;
	*what = "dumpable";
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	*what = "no_new_privs";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	*what = "seccomp";
	return seccomp();
}
