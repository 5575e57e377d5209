/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The heap in use: the bytes malloc has handed out and not had back, its
 * large (mmap'ed) blocks counted.  What bounds the parser helper's caches
 * (flightrec-parse.c, symbolizer.c): libdw's tables are counted nowhere
 * else.  Under AddressSanitizer its own allocator answers, as glibc's
 * mallinfo2() then reports nothing, and the bounds would never be met in
 * the sanitized test run.
 *
 * glibc's answer walks every free list: tens of microseconds, so callers
 * ask at most a few times a second (or around an operation that may have
 * grown it a lot).
 */
#ifndef FR_HEAP_H
#define FR_HEAP_H

#include <stddef.h>

size_t fr_heap_in_use(void);

#endif
