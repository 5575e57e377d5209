/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl mark TEXT: an annotation in the recording, attributed to frctl's
 * caller ("deploy started", "failover begins"). */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "control-client.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"

int verb_mark(struct frctl *f, int argc, char **argv)
{
	struct json_object *req, *resp = NULL;
	int k, ret;

	k = frctl_parse_simple(f, argc, argv, "mark",
			       "Usage: frctl mark TEXT\n\n"
			       "Writes TEXT (at most 1024 bytes) into the recording as a 'mark' record,\n"
			       "attributed to the calling process. Applications can also send a line\n"
			       "to the annotation socket beside the control socket (annotate.sock).\n"
			       "Only root and members of the daemon's control.group may mark;\n"
			       "anyone else gets \"permission denied\" (exit status 4).\n",
			       NULL, NULL, 1);
	if (k >= 0)
		return k;
	if (strlen(argv[optind]) == 0 || strlen(argv[optind]) > 1024) {
		frctl_error("mark: the text must be 1 to 1024 bytes long");
		return EXIT_USAGE;
	}
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("mark"));
	json_object_object_add(req, "text", json_object_new_string(argv[optind]));
	ret = frctl_request(f, req, "mark", false, &resp);
	json_object_put(req);
	json_object_put(resp);
	return ret;
}
