/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Syscall number <-> name for the native architecture (libseccomp's tables). */
#ifndef FR_SYSCALL_NAMES_H
#define FR_SYSCALL_NAMES_H

#include <stddef.h>

/* Returns the name or NULL when unknown. The string is owned by the table. */
const char *fr_syscall_name(unsigned nr);
/* The same, and its length in *@len. */
const char *fr_syscall_name_n(unsigned nr, size_t *len);
/* Returns the number, or -ENOENT. */
int fr_syscall_number(const char *name);

#endif
