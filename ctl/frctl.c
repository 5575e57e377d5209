/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl: reads a flightrec store (directly, daemon or not) and talks to
 * flightrecd over its control socket.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/incident.h"
#include "../lib/store-reader.h"
#include "frctl.h"

void frctl_error(const char *fmt, ...)
{
	va_list ap;

	fputs("frctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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

static void help(void)
{
	printf("Usage: frctl [GLOBAL OPTIONS] VERB [OPTIONS]\n"
	       "\n"
	       "Reads what flightrecd recorded, and asks the running daemon for its state.\n"
	       "\n"
	       "Verbs:\n"
	       "  dump      records of a time window: text, JSON Lines, Perfetto trace,\n"
	       "            folded stacks, or a bundle file (-o) to attach to a ticket\n"
	       "  report    one screen about a window or an incident: what fired, the\n"
	       "            slowest calls and I/O, where the CPU went, processes, gaps\n"
	       "  status    daemon state, record rates, losses, store use and time span\n"
	       "  boots     the boots the store holds records of (for dump --boot)\n"
	       "  mark TEXT write an annotation into the recording\n"
	       "  freeze    keep the window around now as an incident (--reason TEXT)\n"
	       "  incidents list the incidents (frozen windows) of the store\n"
	       "  upload    PUT the incidents not uploaded yet to upload.url (HTTP/WebDAV)\n"
	       "\n"
	       "Global options (also accepted after the verb):\n"
	       "  -c, --config FILE   configuration (default %s)\n"
	       "  -s, --store DIR     store directory (default: store.path from the config)\n"
	       "      --socket PATH   control socket (default: DIR/control.sock with --store,\n"
	       "                      else control.socket from the config)\n"
	       "  -h, --help          this help; 'frctl VERB --help' for a verb\n"
	       "      --version       version\n"
	       "\n"
	       "Examples:\n"
	       "  frctl report --last 5m                  what happened in the last 5 minutes\n"
	       "  frctl dump --last 60s                   the records, for people\n"
	       "  frctl dump -f --type exec               new processes as they start, like\n"
	       "                                          journalctl -f\n"
	       "  frctl dump --last 10m -o ticket.frb     a bundle to attach to the ticket\n"
	       "  frctl report --input ticket.frb         ... read on another machine\n"
	       "  frctl dump --incident ID --format perfetto -o trace.json   for ui.perfetto.dev\n"
	       "  frctl dump --last 60s --format folded | flamegraph.pl > cpu.svg\n"
	       "  frctl dump --since '2026-11-21 14:02' --until '2026-11-21 14:05' --format json\n"
	       "  frctl --store ./var/flightrec status\n"
	       "\n"
	       "Exit status: 0 success, 1 failure, 2 bad usage, 3 daemon not running (status),\n"
	       "4 permission denied (freeze, mark: root or control.group only).\n"
	       "See frctl(1).\n",
	       FR_CONF_DEFAULT_PATH);
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

int frctl_load_conf(struct frctl *f)
{
	static bool loaded;
	char err[512];
	int k;

	if (loaded)
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
	loaded = true;
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

int frctl_open_store(struct frctl *f, const char *path, struct fr_store_reader **ret)
{
	int k = fr_store_reader_open(path, ret);

	if (k == -ENOENT || k == -ENOMEDIUM)
		frctl_error("no store at %s (flightrecd has not written there; use --store DIR)", path);
	else if (k == -EACCES)
		frctl_error("cannot read store %s: permission denied (the store is readable by root)", path);
	else if (k < 0)
		frctl_error("cannot open store %s: %s", path, strerror(-k));
	return k;
}

int frctl_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta)
{
	int k = fr_store_reader_open_incident(path, ret, ret_meta);

	if (k == -ENOENT)
		frctl_error("no such file %s (incidents: see 'frctl incidents')", path);
	else if (k == -EBADMSG)
		frctl_error("%s is not an incident or bundle file, or it is damaged", path);
	else if (k == -ENODATA)
		frctl_error("%s is truncated: the file is shorter than the length sealed in its header", path);
	else if (k == -EPROTONOSUPPORT)
		frctl_error("%s was written by a newer flightrec; this frctl cannot read it", path);
	else if (k < 0)
		frctl_error("cannot open %s: %s", path, strerror(-k));
	return k;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 0x101 },
		{},
	};
	struct frctl f = { .config_path = FR_CONF_DEFAULT_PATH };
	const char *verb;
	int c, k;

	opterr = 0; /* we print one line ourselves */
	/* '+': stop at the verb; its options are parsed by the verb */
	while ((c = getopt_long(argc, argv, "+c:s:h", opts, NULL)) >= 0) {
		if (frctl_global_option(&f, c, optarg))
			continue;
		switch (c) {
		case 'h':
			help();
			return EXIT_OK;
		case 0x101:
			printf("frctl " FR_VERSION "\n");
			return EXIT_OK;
		default:
			return frctl_bad_option(NULL, argv);
		}
	}
	if (optind >= argc) {
		frctl_error("missing verb. Try 'frctl --help'.");
		return EXIT_USAGE;
	}
	verb = argv[optind];
	argc -= optind;
	argv += optind;
	optind = 0; /* reset getopt for the verb */

	if (strcmp(verb, "dump") == 0)
		k = verb_dump(&f, argc, argv);
	else if (strcmp(verb, "report") == 0)
		k = verb_report(&f, argc, argv);
	else if (strcmp(verb, "status") == 0)
		k = verb_status(&f, argc, argv);
	else if (strcmp(verb, "boots") == 0)
		k = verb_boots(&f, argc, argv);
	else if (strcmp(verb, "mark") == 0)
		k = verb_mark(&f, argc, argv);
	else if (strcmp(verb, "freeze") == 0)
		k = verb_freeze(&f, argc, argv);
	else if (strcmp(verb, "incidents") == 0)
		k = verb_incidents(&f, argc, argv);
	else if (strcmp(verb, "upload") == 0)
		k = verb_upload(&f, argc, argv);
	else {
		frctl_error("unknown verb '%s'. Try 'frctl --help'.", verb);
		k = EXIT_USAGE;
	}
	fr_conf_done(&f.conf);
	return k;
}
