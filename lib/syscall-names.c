/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>

#include "syscall-names.h"

/* libseccomp allocates each name; cache them, as dumps ask for the same few
 * thousands of times. */
#define CACHE_MAX 1024
static char *cache[CACHE_MAX];
static unsigned char cached[CACHE_MAX];

const char *fr_syscall_name(unsigned nr)
{
	if (nr >= CACHE_MAX)
		return NULL;
	if (!cached[nr]) {
		cache[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
		cached[nr] = 1;
	}
	return cache[nr];
}

int fr_syscall_number(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	return nr < 0 ? -ENOENT : nr;
}
