/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "frctl-error.h"
#include "options.h"

int frctl_bad_option(const char *verb, char **argv)
{
	const char *arg = argv[optind - 1];

	if (optopt && optopt < 0x100 && !(arg[0] == '-' && arg[1] == '-'))
		frctl_error("%s option '-%c'. Try 'frctl%s%s --help'.",
			    strchr("cso", optopt) ? "missing argument for" : "unrecognized",
			    optopt, verb ? " " : "", verb ? verb : "");
	else
		frctl_error("%s option '%s'. Try 'frctl%s%s --help'.",
			    optopt ? "missing argument for" : "unrecognized", arg,
			    verb ? " " : "", verb ? verb : "");
	return EXIT_USAGE;
}
bool frctl_global_option(struct frctl *f, int opt, const char *arg)
{
	switch (opt) {
	case 'c':
		f->config_path = arg;
		f->config_explicit = true;
		return true;
	case 's':
		f->store_arg = arg;
		return true;
	case 0x100:
		f->socket_arg = arg;
		return true;
	}
	return false;
}
int frctl_parse_simple(struct frctl *f, int argc, char **argv, const char *verb, const char *help,
		       bool *json, const char **input, int nargs)
{
	/* --input only where it is taken: elsewhere its argument would be
	 * named as the unknown option */
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	}, opts_input[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "input", required_argument, NULL, 'i' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:s:h", input ? opts_input : opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		if (c == 'h') {
			fputs(help, stdout);
			return EXIT_OK;
		}
		if (c == 'j' && json) {
			*json = true;
			continue;
		}
		if (c == 'i' && input) {
			*input = optarg;
			continue;
		}
		return frctl_bad_option(verb, argv);
	}
	if (argc - optind != nargs) {
		if (argc - optind > nargs)
			frctl_error("%s: unexpected argument '%s'. Try 'frctl %s --help'.", verb, argv[optind + nargs], verb);
		else
			frctl_error("%s: missing argument. Try 'frctl %s --help'.", verb, verb);
		return EXIT_USAGE;
	}
	return -1;
}
