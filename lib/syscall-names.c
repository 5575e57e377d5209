/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syscall-names.h"

/* libseccomp allocates each name: the table is resolved once, on first
 * use, by whichever thread comes first (dump formats on every CPU). */
#define CACHE_MAX 1024
static char *cache[CACHE_MAX];
static uint8_t cache_len[CACHE_MAX];
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_fill(void)
{
	for (unsigned nr = 0; nr < CACHE_MAX; nr++) {
		cache[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
		/* syscall names are short; a longer one is left unknown */
		if (cache[nr] && strlen(cache[nr]) > UINT8_MAX) {
			free(cache[nr]);
			cache[nr] = NULL;
		}
		cache_len[nr] = cache[nr] ? (uint8_t)strlen(cache[nr]) : 0;
	}
}

const char *fr_syscall_name(unsigned nr)
{
	if (nr >= CACHE_MAX)
		return NULL;
	pthread_once(&cache_once, cache_fill);
	return cache[nr];
}

const char *fr_syscall_name_n(unsigned nr, size_t *len)
{
	if (nr >= CACHE_MAX)
		return NULL;
	pthread_once(&cache_once, cache_fill);
	*len = cache_len[nr];
	return cache[nr];
}

int fr_syscall_number(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	return nr < 0 ? -ENOENT : nr;
}
