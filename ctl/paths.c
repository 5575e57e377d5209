/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

int frctl_load_conf(struct frctl *f)
{
	char err[512];
	int k;

	if (f->conf_loaded)
		return 0;
	fr_conf_init_defaults(&f->conf);
	k = fr_conf_load(&f->conf, f->config_path, f->config_explicit, err, sizeof(err));
	if (k < 0 && f->store_arg && !f->config_explicit) {
		/* an incident is no time to be locked out of the store by a
		 * broken configuration: --store names all that is needed */
		fprintf(stderr, "frctl: warning: %s (ignored: --store given)\n", err);
		fr_conf_done(&f->conf);
		fr_conf_init_defaults(&f->conf);
	} else if (k < 0) {
		fprintf(stderr, "frctl: %s%s\n", err, f->config_explicit ? "" : " (give --store DIR to read a store anyway)");
		return k;
	}
	f->conf_loaded = true;
	return 0;
}

const char *frctl_store_path(struct frctl *f)
{
	return f->store_arg ? f->store_arg : f->conf.store_path;
}

char *frctl_socket_path(struct frctl *f)
{
	char *p = NULL;

	if (f->socket_arg)
		return strdup(f->socket_arg);
	if (f->store_arg) {
		if (asprintf(&p, "%s/control.sock", f->store_arg) < 0)
			return NULL;
		return p;
	}
	return strdup(f->conf.socket_path);
}
