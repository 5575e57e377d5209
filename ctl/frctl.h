/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the dispatcher (frctl.c) gives its verbs: the global options and
 * the configuration, the exit codes, and the verbs' entry points. */
#ifndef FR_FRCTL_H
#define FR_FRCTL_H

#include <stdbool.h>

#include "../lib/conf.h"

struct frctl {
	const char *config_path;
	bool config_explicit;
	const char *store_arg;  /* --store */
	const char *socket_arg; /* --socket */
	struct fr_conf conf;
	bool conf_loaded; /* frctl_load_conf() succeeded: it loads once a run
			     (per struct, not per process: fuzz-incident
			     runs frctl's main again and again) */
};

/* Exit codes (documented in frctl(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1,  /* runtime failure: store unreadable, I/O error */
	EXIT_USAGE = 2,     /* bad command line */
	EXIT_NOT_RUNNING = 3, /* status: the daemon is not running */
	EXIT_DENIED = 4,    /* freeze, mark: the daemon (or the control socket's
			       permissions) refused a caller that is neither
			       root nor in control.group */
};

int verb_dump(struct frctl *f, int argc, char **argv);
int verb_report(struct frctl *f, int argc, char **argv);
int verb_status(struct frctl *f, int argc, char **argv);
int verb_boots(struct frctl *f, int argc, char **argv);
int verb_mark(struct frctl *f, int argc, char **argv);
int verb_freeze(struct frctl *f, int argc, char **argv);
int verb_incidents(struct frctl *f, int argc, char **argv);
/* upload.c: PUTs the incidents not uploaded yet to upload.url */
int verb_upload(struct frctl *f, int argc, char **argv);
/* rules-test.c: the trigger rules tried on the stored past */
int verb_rules(struct frctl *f, int argc, char **argv);

#endif
