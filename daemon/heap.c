/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <malloc.h>

#include "heap.h"
#include "sanitized.h"

#ifdef FR_SANITIZED
/* the sanitizer runtime's (gcc ships no header declaring it) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

size_t fr_heap_in_use(void)
{
#ifdef FR_SANITIZED
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}
