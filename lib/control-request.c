/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "control-request.h"

static const struct {
	const char *name;
	bool changes_state;
} verbs[FR_VERB__MAX] = {
	[FR_VERB_STATUS] = { "status", false },
	[FR_VERB_FREEZE] = { "freeze", true },
	[FR_VERB_MARK] = { "mark", true },
};

const char *fr_control_verb_name(enum fr_control_verb v)
{
	return (unsigned)v < FR_VERB__MAX ? verbs[v].name : NULL;
}

bool fr_control_verb_changes_state(enum fr_control_verb v)
{
	/* an unknown one is treated as the worst */
	return (unsigned)v < FR_VERB__MAX ? verbs[v].changes_state : true;
}

static int fail(struct fr_control_request *r, const char **why, const char *msg)
{
	fr_control_request_done(r);
	*why = msg;
	return -EINVAL;
}

int fr_control_request_parse(const char *buf, size_t n, struct fr_control_request *ret, const char **why)
{
	struct fr_control_request r = {};
	struct json_object *verb, *text;
	char *copy;
	size_t v;

	if (n > FR_CONTROL_REQUEST_MAX)
		return fail(&r, why, "request too large");
	/* the datagram as a C string: its text up to the first NUL, if any */
	copy = malloc(n + 1);
	if (!copy)
		return fail(&r, why, "out of memory");
	memcpy(copy, buf, n);
	copy[n] = 0;
	r.obj = json_tokener_parse(copy);
	free(copy);
	if (!r.obj || !json_object_is_type(r.obj, json_type_object))
		return fail(&r, why, "malformed request: expected a JSON object");
	if (!json_object_object_get_ex(r.obj, "verb", &verb) || !json_object_is_type(verb, json_type_string))
		return fail(&r, why, "request has no \"verb\"");
	for (v = 0; v < FR_VERB__MAX; v++)
		if (strcmp(json_object_get_string(verb), verbs[v].name) == 0)
			break;
	if (v == FR_VERB__MAX)
		return fail(&r, why, "unknown verb");
	r.verb = (enum fr_control_verb)v;
	switch (r.verb) {
	case FR_VERB_STATUS:
	case FR_VERB__MAX:
		break;
	case FR_VERB_FREEZE:
		/* (a reason that is no string is taken as its JSON text) */
		if (json_object_object_get_ex(r.obj, "reason", &text) && !json_object_is_type(text, json_type_null)) {
			r.text = json_object_get_string(text);
			r.len = strlen(r.text);
			if (r.len > FR_CONTROL_TEXT_MAX)
				return fail(&r, why, "reason is longer than 1024 bytes");
		}
		break;
	case FR_VERB_MARK:
		if (!json_object_object_get_ex(r.obj, "text", &text) || !json_object_is_type(text, json_type_string))
			return fail(&r, why, "mark needs a \"text\" string");
		r.text = json_object_get_string(text);
		r.len = (size_t)json_object_get_string_len(text);
		if (r.len == 0)
			return fail(&r, why, "mark text is empty");
		if (r.len > FR_CONTROL_TEXT_MAX)
			return fail(&r, why, "mark text is longer than 1024 bytes");
		break;
	}
	*ret = r;
	return 0;
}

void fr_control_request_done(struct fr_control_request *r)
{
	json_object_put(r->obj);
	*r = (struct fr_control_request){};
}
