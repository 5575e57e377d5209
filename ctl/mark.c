/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl mark TEXT: an annotation in the recording, attributed to frctl's
 * caller ("deploy started", "failover begins"). */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "control-client.h"
#include "frctl.h"

int verb_mark(struct frctl *f, int argc, char **argv)
{
	struct json_object *req, *resp = NULL, *err;
	char *sock;
	int k, ret = EXIT_FAILURE_;

	k = frctl_parse_simple(f, argc, argv, "mark",
			       "Usage: frctl mark TEXT\n\n"
			       "Writes TEXT (at most 1024 bytes) into the recording as a 'mark' record,\n"
			       "attributed to the calling process. Applications can also send a line\n"
			       "to the annotation socket beside the control socket (annotate.sock).\n",
			       NULL, 1);
	if (k >= 0)
		return k;
	if (strlen(argv[optind]) == 0 || strlen(argv[optind]) > 1024) {
		frctl_error("mark: the text must be 1 to 1024 bytes long");
		return EXIT_USAGE;
	}
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	sock = frctl_socket_path(f);
	if (!sock)
		return EXIT_FAILURE_;
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("mark"));
	json_object_object_add(req, "text", json_object_new_string(argv[optind]));
	k = fr_control_call(sock, req, &resp);
	json_object_put(req);
	if (k == -ENOENT || k == -ECONNREFUSED)
		frctl_error("flightrecd is not running (no daemon on %s)", sock);
	else if (k < 0)
		frctl_error("cannot reach flightrecd on %s: %s", sock, strerror(-k));
	else if (json_object_object_get_ex(resp, "error", &err))
		frctl_error("flightrecd refused the mark: %s", json_object_get_string(err));
	else
		ret = EXIT_OK;
	json_object_put(resp);
	free(sock);
	return ret;
}
