/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket: a SOCK_SEQPACKET unix socket; each connection sends
 * one JSON request ({"verb": "status"}) and gets one JSON reply.  Served
 * from the daemon's sd_event loop, never blocking it.  The socket file is
 * open to every local user (0666); what a peer may do is decided per
 * request from the credentials the kernel recorded at connect()
 * (SO_PEERCRED, SO_PEERGROUPS), which the peer cannot forge.
 */
#ifndef FR_CONTROL_H
#define FR_CONTROL_H

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "../lib/control-request.h"

struct fr_control;

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Who sent a request, as the kernel saw it when the peer connected. */
struct fr_control_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	/* root, or a member (primary or supplementary) of control.group:
	 * may use the verbs that change state */
	bool privileged;
};

/* Builds the reply to @req (parsed and checked: control-request.h) from
 * @peer; returns a new object (or NULL: internal error). */
typedef struct json_object *(*fr_control_handler)(const struct fr_control_request *req,
						  const struct fr_control_peer *peer, void *userdata);

int fr_control_new(sd_event *e, const char *path, fr_control_handler h, void *userdata,
		   struct fr_control **ret);
struct fr_control *fr_control_free(struct fr_control *c);

/* Who may change state besides root: the members of group @name, looked
 * up now (at start and reload); no such group means root only.  Logs the
 * outcome when it differs from the previous one. */
void fr_control_set_group(struct fr_control *c, const char *name);
/* Whether a sender with user @uid, group @gid and supplementary @groups
 * may change state. */
bool fr_control_privileged(const struct fr_control *c, uid_t uid, gid_t gid, const gid_t *groups, size_t ngroups);
/* The group's id in *@ret, if control.group exists. */
bool fr_control_group(const struct fr_control *c, gid_t *ret);
/* The "permission denied" reply to a request for @what (a verb) from
 * @peer; the refusal is counted and logged (the first, then every
 * hundredth: any local user can send them). */
struct json_object *fr_control_deny(struct fr_control *c, const struct fr_control_peer *peer, const char *what);
/* Refusals so far (control requests and annotations). */
uint64_t fr_control_denied(const struct fr_control *c);
/* Requests refused for their uid's rate (root's never are). */
uint64_t fr_control_rate_limited(const struct fr_control *c);

#endif
