/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * C++ names as people read them, as perf and eu-stack print them:
 * _ZN4shop4Cart8checkoutEi is shop::Cart::checkout(int).  libstdc++'s
 * __cxa_demangle (the Itanium C++ ABI's demangler, what g++ and clang
 * emit) does the work; names are demangled once per reader and kept.
 *
 * Bounded: at most FR_DEMANGLE_BYTES_MAX of names are kept; past that a
 * name stays as it is (counted), and so does one longer than
 * FR_DEMANGLE_NAME_MAX (the demangler's time and memory grow with it).
 * Thread-safe: the window's threads name frames in parallel.
 */
#ifndef FR_DEMANGLE_H
#define FR_DEMANGLE_H

#include <stddef.h>
#include <stdint.h>

#define FR_DEMANGLE_BYTES_MAX (32u << 20)
#define FR_DEMANGLE_NAME_MAX 4096

struct fr_demangler;

int fr_demangler_new(struct fr_demangler **ret);
struct fr_demangler *fr_demangler_free(struct fr_demangler *d);

/* @name (@len bytes, not NUL-terminated) demangled, with its length in
 * *ret_len: valid as long as @d.  NULL when it is no C++ name (no "_Z"
 * prefix), does not demangle, or is not kept (the bounds). */
const char *fr_demangle(struct fr_demangler *d, const char *name, size_t len, uint32_t *ret_len);

/* A user frame's name demangled in place (lib/symtab.h), the binary's kept
 * in its mangled/mangled_len; kernel frames, markers and names that are no
 * C++ stay as they are.  @d may be NULL: nothing changes. */
struct fr_frame;
void fr_frame_demangle(struct fr_demangler *d, struct fr_frame *f);

struct fr_demangler_stats {
	uint64_t names;    /* kept */
	uint64_t bytes;    /* their memory */
	uint64_t failed;   /* "_Z" names that did not demangle */
	uint64_t not_kept; /* left as they were for the bounds */
};
void fr_demangler_get_stats(struct fr_demangler *d, struct fr_demangler_stats *ret);

#endif
