/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test workload: prints its pid, then dereferences NULL (a real SIGSEGV). */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	volatile int *p = NULL;

	printf("%d\n", getpid());
	fflush(stdout);
	*p = 1;
	return 0;
}
