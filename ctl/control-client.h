/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CONTROL_CLIENT_H
#define FR_CONTROL_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "frctl.h"

/* Sends @req, returns the parsed reply.  -ENOENT/-ECONNREFUSED: no daemon. */
int fr_control_call(const char *path, struct json_object *req, struct json_object **ret);

/* One request to the daemon over its control socket (loads the
 * configuration to find it).  Returns 0 with the reply in *resp.  On
 * failure prints one line naming @what and returns the exit code, except
 * with @down_ok, where a daemon that cannot be reached returns -errno and
 * prints nothing, and an "error" reply is returned as 0 for the caller. */
int frctl_request(struct frctl *f, struct json_object *req, const char *what, bool down_ok,
		  struct json_object **resp);

#endif
