/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>

#include "dlopen-lib.h"

int fr_dlopen_lib(const char *soname, const struct fr_dlsym *syms, size_t n, const char **ret_error)
{
	/* kept open for the process's life: the functions stay valid */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		*syms[i].fn = dlsym(h, syms[i].name);
		if (!*syms[i].fn) {
			for (size_t j = 0; j < i; j++)
				*syms[j].fn = NULL;
			goto fail;
		}
	}
	return 0;
fail:
	*ret_error = dlerror();
	return -ELIBACC;
}
