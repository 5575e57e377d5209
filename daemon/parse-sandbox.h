/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox flightrec-parse enters before it reads a byte of anyone's
 * file (flightrecd(8), SECURITY):
 *   - no capabilities (permitted, effective, inheritable, ambient), not
 *     dumpable (no ptrace by anyone without CAP_SYS_PTRACE, no core),
 *     no new privileges;
 *   - resource limits: heap and other private writable memory
 *     (RLIMIT_DATA), address space (RLIMIT_AS, loose: binaries are
 *     mapped whole), descriptors, no files written, no core;
 *   - a seccomp filter that allows only reading and writing descriptors
 *     it holds (its socket to flightrecd, and the files flightrecd hands
 *     it), memory management without executable mappings, and exit:
 *     no open, no exec, no fork, no signals to others, no sockets, no
 *     ptrace; anything else fails with EPERM.
 * Under a sanitizer (ASan reserves terabytes of shadow memory) the
 * memory limits are left out; the rest applies.
 */
#ifndef FR_PARSE_SANDBOX_H
#define FR_PARSE_SANDBOX_H

#include <stdint.h>

/* Bounds of the helper's memory: its caches are bounded far below
 * (unwinder 32 MiB of heap, symbol tables 24 MiB, debug information
 * 8 MiB, JIT maps 64 MiB); this is the stop for what they do not count. */
#define FR_PARSE_DATA_MAX (384ull << 20)
#define FR_PARSE_AS_MAX (16ull << 30)
#define FR_PARSE_FILES_MAX 256

/* 0, or -errno with the step that failed in *what. */
int fr_parse_sandbox_enter(const char **what);

#endif
