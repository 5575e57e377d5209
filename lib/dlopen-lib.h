/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Libraries opened when a verb first needs them (dlopen), not linked:
 * libcurl (frctl upload) and libdebuginfod (names from debuginfod
 * servers) bring 30 libraries with them (TLS, Kerberos, LDAP, SSH, ...),
 * whose loading and relocation took 7 of the 10.4 ms of every frctl
 * start, `frctl --version` alike.  A caller declares a pointer per
 * function with the function's own type (typeof), so calls through it
 * are checked against the library's header as direct calls are.
 */
#ifndef FR_DLOPEN_LIB_H
#define FR_DLOPEN_LIB_H

#include <stddef.h>

struct fr_dlsym {
	void **fn;        /* where the function's address goes */
	const char *name;
};
#define FR_DLSYM(p, f) { (void **)&(p), #f }

/* Opens @soname (once: a second call finds it open) and sets the @n
 * functions of @syms.  0; or -ELIBACC with dlerror()'s text in
 * *ret_error (valid until the next call), the pointers left NULL. */
int fr_dlopen_lib(const char *soname, const struct fr_dlsym *syms, size_t n, const char **ret_error);

#endif
