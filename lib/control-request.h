/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A control socket request (flightrecd's control.socket, control.h): one
 * datagram of JSON from any local user, parsed and checked here, apart
 * from the daemon's state, so that the whole of what a peer sends is one
 * function (and one fuzz target, tests/fuzz/fuzz-control.c).
 *
 *   {"verb": "status"}
 *   {"verb": "freeze", "reason": "..."}   the reason optional
 *   {"verb": "mark", "text": "..."}
 *
 * Other members are ignored.
 */
#ifndef FR_CONTROL_REQUEST_H
#define FR_CONTROL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

/* larger datagrams are refused: 16 KiB holds a 1024-byte mark even when
 * JSON escaping multiplies it by six */
#define FR_CONTROL_REQUEST_MAX (16 << 10)
/* a mark's text, or a freeze's reason, in bytes */
#define FR_CONTROL_TEXT_MAX 1024

enum fr_control_verb {
	FR_VERB_STATUS,
	FR_VERB_FREEZE,
	FR_VERB_MARK,
	FR_VERB__MAX,
};

struct fr_control_request {
	enum fr_control_verb verb;
	/* freeze: its reason (NULL: none); mark: its text (1 to
	 * FR_CONTROL_TEXT_MAX bytes, @len of them; it may hold NUL bytes) */
	const char *text;
	size_t len;
	struct json_object *obj; /* the parsed request: owns @text */
};

/* The verb's name, and whether it changes state (root and control.group
 * only).  A new verb is added here, so it cannot be left open by
 * forgetting a check. */
const char *fr_control_verb_name(enum fr_control_verb v);
bool fr_control_verb_changes_state(enum fr_control_verb v);

/* Parses the @n bytes of @buf.  0 and *@ret filled (release it with
 * fr_control_request_done()), or -EINVAL and *@why: the one line the
 * peer is answered ("unknown verb", "mark text is empty", ...). */
int fr_control_request_parse(const char *buf, size_t n, struct fr_control_request *ret, const char **why);
void fr_control_request_done(struct fr_control_request *r);

#endif
