/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/mman.h>

#include "big-alloc.h"

void *fr_big_alloc(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* advice only: without THP ("never") it stays 4 KiB pages */
	(void)madvise(p, n ? n : 1, MADV_HUGEPAGE);
	return p;
}

void fr_big_free(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}
