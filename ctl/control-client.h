/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FR_CONTROL_CLIENT_H
#define FR_CONTROL_CLIENT_H

#include <json-c/json.h>

/* Sends @req, returns the parsed reply.  -ENOENT/-ECONNREFUSED: no daemon. */
int fr_control_call(const char *path, struct json_object *req, struct json_object **ret);

#endif
