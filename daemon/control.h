/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket: a SOCK_SEQPACKET unix socket; each connection sends
 * one JSON request ({"verb": "status"}) and gets one JSON reply.  Served
 * from the daemon's sd_event loop, never blocking it.
 */
#ifndef FR_CONTROL_H
#define FR_CONTROL_H

#include <json-c/json.h>
#include <systemd/sd-event.h>

struct fr_control;

#include <sys/socket.h>

/* Builds the reply to @req from the peer @cred (SO_PEERCRED); returns a
 * new object (or NULL: internal error). */
typedef struct json_object *(*fr_control_handler)(struct json_object *req, const struct ucred *cred,
						  void *userdata);

int fr_control_new(sd_event *e, const char *path, fr_control_handler h, void *userdata,
		   struct fr_control **ret);
struct fr_control *fr_control_free(struct fr_control *c);

#endif
