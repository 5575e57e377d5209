/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl freeze [--reason TEXT]: keep the window around now as an incident. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control-client.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"

int verb_freeze(struct frctl *f, int argc, char **argv)
{
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "reason", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct json_object *req, *resp = NULL;
	const char *reason = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "c:s:r:h", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		if (c == 'r') {
			reason = optarg;
			continue;
		}
		if (c == 'h') {
			printf("Usage: frctl freeze [--reason TEXT]\n\n"
			       "Keeps the window around now (the manual rule's before and after, 60 s\n"
			       "and 10 s unless configured) as an incident file, written when the\n"
			       "window is complete. Prints the incident id and where it will be.\n"
			       "Only root and members of the daemon's control.group may freeze;\n"
			       "anyone else gets \"permission denied\" (exit status 4).\n");
			return EXIT_OK;
		}
		return frctl_bad_option("freeze", argv);
	}
	if (optind < argc) {
		frctl_error("freeze: unexpected argument '%s' (quote the reason: --reason \"...\")", argv[optind]);
		return EXIT_USAGE;
	}
	if (reason && strlen(reason) > 1024) {
		frctl_error("freeze: the reason must be at most 1024 bytes");
		return EXIT_USAGE;
	}
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("freeze"));
	if (reason)
		json_object_object_add(req, "reason", json_object_new_string(reason));
	ret = frctl_request(f, req, "freeze", false, &resp);
	json_object_put(req);
	if (ret == 0)
		printf("incident %s\n  written to %s\n  when its window ends at %s\n",
		       json_object_get_string(json_object_object_get(resp, "incident")),
		       json_object_get_string(json_object_object_get(resp, "path")),
		       json_object_get_string(json_object_object_get(resp, "end")));
	json_object_put(resp);
	return ret;
}
