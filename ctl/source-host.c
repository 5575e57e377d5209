/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <string.h>

#include "../lib/boot-host.h"
#include "../lib/record-fields.h"
#include "../lib/window.h"
#include "source-host.h"

/* the key of the host of every boot of a file that does not say which */
#define ANY_BOOT "*"

/* a string member, or NULL: the file's JSON is not trusted to be ours */
static const char *member_string(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) :
		       NULL;
}

/* @o when it is a host object of a boot: {"boot_id": 32 hex digits, ...} */
static const char *host_boot_id(struct json_object *o)
{
	const char *id = json_object_is_type(o, json_type_object) ? member_string(o, "boot_id") : NULL;

	return id && strlen(id) == 32 && strspn(id, "0123456789abcdef") == 32 ? id : NULL;
}

struct json_object *frctl_source_hosts_load(int store_fd, struct json_object *meta)
{
	struct json_object *all, *v, *kind;
	const char *id;

	if (store_fd >= 0)
		return fr_boot_hosts_load(store_fd);
	all = json_object_new_object();
	if (!all)
		return NULL;
	/* a bundle names the host of each of its boots; an incident (and a
	 * bundle from before they did: its "host" was the bundling
	 * machine's) says which boot its "host" recorded */
	if (json_object_object_get_ex(meta, "recorded_on", &v) && json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v) && i < 64; i++) {
			struct json_object *h = json_object_array_get_idx(v, i);
			if ((id = host_boot_id(h)))
				json_object_object_add(all, id, json_object_get(h));
		}
	} else if (!(json_object_object_get_ex(meta, "kind", &kind) && json_object_is_type(kind, json_type_string) &&
		     strcmp(json_object_get_string(kind), "bundle") == 0) &&
		   (member_string(meta, "host") || member_string(meta, "kernel"))) {
		struct json_object *h = json_object_new_object();
		/* without a boot id (not written by flightrecd): its boots' */
		id = host_boot_id(meta) ?: ANY_BOOT;
		json_object_object_add(h, "boot_id", json_object_new_string(id));
		json_object_object_add(h, "host", member_string(meta, "host") ? json_object_new_string(member_string(meta, "host")) : NULL);
		json_object_object_add(h, "kernel", member_string(meta, "kernel") ? json_object_new_string(member_string(meta, "kernel")) : NULL);
		json_object_object_add(all, id, h);
	}
	return all;
}

struct json_object *frctl_hosts_find(struct json_object *hosts, const uint8_t boot_id[16])
{
	struct json_object *h;
	char id[40];

	return hosts && (json_object_object_get_ex(hosts, fr_format_boot_id(boot_id, id, sizeof(id)), &h) ||
			 json_object_object_get_ex(hosts, ANY_BOOT, &h)) ?
		       h :
		       NULL;
}

void frctl_hosts_window(struct json_object *hosts, const struct fr_window *w, const char **ret_host,
			const char **ret_kernel)
{
	const struct fr_chunk_info *newest = NULL;
	struct json_object *h;

	/* by the wall clock: each boot's own clock starts again */
	for (size_t i = 0; w && i < w->nchunks; i++)
		if (!newest || w->chunks[i].last_ts + (uint64_t)w->chunks[i].realtime_offset >
				       newest->last_ts + (uint64_t)newest->realtime_offset)
			newest = &w->chunks[i];
	h = newest ? frctl_hosts_find(hosts, newest->boot_id) : NULL;

	*ret_host = h ? member_string(h, "host") : NULL;
	*ret_kernel = h ? member_string(h, "kernel") : NULL;
}
