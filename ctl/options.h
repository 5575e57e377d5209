/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line every verb shares: the global options, taken before
 * the verb (by main) or after it (by the verb's option loop), and the
 * one line about a bad option. */
#ifndef FR_CTL_OPTIONS_H
#define FR_CTL_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

#include "frctl.h"

/* Handles a global option inside a verb's option loop; returns true if it
 * was one. */
bool frctl_global_option(struct frctl *f, int opt, const char *arg);
#define FRCTL_GLOBAL_OPTIONS                                       \
	{ "config", required_argument, NULL, 'c' },                \
	{ "store", required_argument, NULL, 's' },                 \
	{ "socket", required_argument, NULL, 0x100 }

/* Option parsing of verbs that take only the global options, --help and,
 * when @json is not NULL, --json, when @input is not NULL, --input FILE,
 * and exactly @nargs arguments (left at argv[optind]).  Returns -1 to go
 * on, or the exit code to return. */
int frctl_parse_simple(struct frctl *f, int argc, char **argv, const char *verb, const char *help,
		       bool *json, const char **input, int nargs);

/* After getopt_long returned '?' or ':' (opterr is 0): one line naming the
 * bad option and where help is. Returns EXIT_USAGE. */
int frctl_bad_option(const char *verb, char **argv);

#endif
