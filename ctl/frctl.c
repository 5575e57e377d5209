/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl: reads a flightrec store (directly, daemon or not) and talks to
 * flightrecd over its control socket.  This file is the dispatcher: the
 * global options before the verb, the usage, and the verb table.  What
 * the verbs share lives in files named for it (options.c, paths.c,
 * window-args.c, ...), which never call back here.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "window-args.h"

static void help(void)
{
	printf("Usage: frctl [GLOBAL OPTIONS] VERB [OPTIONS]\n"
	       "\n"
	       "Reads what flightrecd recorded, and asks the running daemon for its state.\n"
	       "\n"
	       "Verbs:\n"
	       "  dump      records of a time window: text, JSON Lines, Perfetto trace,\n"
	       "            folded stacks, or a bundle file (-o) to attach to a ticket\n"
	       "  report    one screen about a window or an incident: what changed, what\n"
	       "            fired, the slowest calls and I/O, where the CPU went, gaps\n"
	       "  rules test  the trigger rules tried on the stored past: when each\n"
	       "            would have fired, joined or been suppressed\n"
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
	       "      --list-types    the record types (dump --type), one a line\n"
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
	       "  frctl rules test --last 24h             would the rules have fired?\n"
	       "  frctl --store ./var/flightrec status\n"
	       "\n"
	       "Exit status: 0 success, 1 failure, 2 bad usage, 3 daemon not running (status),\n"
	       "4 permission denied (freeze, mark: root or control.group only).\n"
	       "See frctl(1).\n",
	       FR_CONF_DEFAULT_PATH);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 0x101 },
		{ "list-types", no_argument, NULL, 0x102 },
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
		case 0x102:
			printf("%s\n", frctl_record_types_list("\n", "\n"));
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
	else if (strcmp(verb, "rules") == 0)
		k = verb_rules(&f, argc, argv);
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
