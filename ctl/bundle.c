/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bundles: a window cut out of a store (or of an incident or bundle file)
 * as one self-contained file to attach to a ticket.  Same format as an
 * incident file (flightrec-store(5)): the window's chunks, the keyframe
 * before it and the context chunks between, byte for byte, so the frames'
 * symbols, the cgroup names and the processes travel with it; the JSON
 * metadata says "kind": "bundle", where it came from, the host, kernel and
 * boot that recorded it (and, apart, the machine that cut it), and the
 * window, which is the default window of every verb reading it.
 * Redacted (--redact), the source read is already a copy without what
 * was cut (redact-source.c): its chunks are copied the same way, and the
 * metadata's strings are cut too and say what was ("redacted").
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../lib/boot-host.h"
#include "../lib/clock.h"
#include "../lib/incident.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/redact.h"
#include "bundle.h"
#include "frctl-error.h"
#include "source-host.h"

/* {"host", "kernel"} of the machine running this frctl: who cut the
 * bundle, not who recorded it */
static struct json_object *bundled_on(void)
{
	struct json_object *o = json_object_new_object();
	char host[256] = "";
	struct utsname u = {};

	(void)gethostname(host, sizeof(host) - 1);
	(void)uname(&u);
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "kernel", json_object_new_string(u.release));
	return o;
}

int fr_bundle_write(const struct frctl_source *s, const char *path)
{
	struct fr_kernel_names_stats names;
	struct fr_chunk_ref *refs = NULL;
	struct json_object *meta, *boots, *recorded_on, *newest_host = NULL, *v;
	const struct fr_chunk_info *newest = NULL;
	size_t n = 0, records = 0;
	char t[64];
	int64_t bytes;
	int k;

	k = fr_window_select(s->reader, &s->q, &refs, &n);
	if (k < 0) {
		frctl_error("cannot read %s: %s", s->name, strerror(-k));
		return EXIT_FAILURE_;
	}
	for (size_t i = 0; i < s->w->n; i++)
		records += !s->w->items[i].hidden && !fr_record_type_is_meta(s->w->items[i].type);
	boots = json_object_new_array();
	recorded_on = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const struct fr_chunk_info *c = &refs[i].info;
		bool seen = false;
		if (!newest || c->last_ts + (uint64_t)c->realtime_offset > newest->last_ts + (uint64_t)newest->realtime_offset)
			newest = c;
		for (size_t j = 0; j < i && !seen; j++)
			seen = memcmp(refs[j].info.boot_id, c->boot_id, 16) == 0;
		if (seen)
			continue;
		json_object_array_add(boots, json_object_new_string(fr_format_boot_id(c->boot_id, t, sizeof(t))));
		v = frctl_hosts_find(s->hosts, c->boot_id);
		json_object_array_add(recorded_on, v ? json_object_get(v) : fr_boot_host_json(c->boot_id, NULL));
	}
	if (newest)
		newest_host = frctl_hosts_find(s->hosts, newest->boot_id);
	meta = json_object_new_object();
	json_object_object_add(meta, "kind", json_object_new_string("bundle"));
	json_object_object_add(meta, "created",
			       json_object_new_string(fr_format_rfc3339(fr_now_ns(CLOCK_REALTIME), t, sizeof(t))));
	json_object_object_add(meta, "producer", json_object_new_string("frctl " FR_VERSION));
	/* the machine that recorded the window (its newest boot): null
	 * when the store does not say (written before it kept hosts) */
	json_object_object_add(meta, "host", newest_host && json_object_object_get_ex(newest_host, "host", &v) ? json_object_get(v) : NULL);
	json_object_object_add(meta, "kernel", newest_host && json_object_object_get_ex(newest_host, "kernel", &v) ? json_object_get(v) : NULL);
	json_object_object_add(meta, "boot_id", newest ? json_object_new_string(fr_format_boot_id(newest->boot_id, t, sizeof(t))) : NULL);
	json_object_object_add(meta, "bundled_on", bundled_on());
	json_object_object_add(meta, "source", json_object_new_string(s->name));
	json_object_object_add(meta, "since", s->q.since_ns ? json_object_new_string(fr_format_rfc3339(s->q.since_ns, t, sizeof(t))) : NULL);
	json_object_object_add(meta, "until", s->q.until_ns != UINT64_MAX ? json_object_new_string(fr_format_rfc3339(s->q.until_ns, t, sizeof(t))) : NULL);
	json_object_object_add(meta, "since_ns", json_object_new_uint64(s->q.since_ns));
	json_object_object_add(meta, "until_ns", json_object_new_uint64(s->q.until_ns));
	json_object_object_add(meta, "boot_ids", boots);
	json_object_object_add(meta, "recorded_on", recorded_on);
	json_object_object_add(meta, "records", json_object_new_uint64(records));
	json_object_object_add(meta, "chunks", json_object_new_uint64(n));
	if (s->meta)
		json_object_object_add(meta, "from", json_object_get(s->meta));
	if (s->redactor) {
		/* the source's name and "from" may hold paths too ("from"
		 * was cut when the source was opened: cut again, it stays) */
		fr_redact_json(s->redactor, meta);
		json_object_object_add(meta, "redacted", fr_redact_summary(s->redactor));
	}
	bytes = fr_incident_write(path, json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN), s->reader, refs, n,
				  &names);
	json_object_put(meta);
	free(refs);
	if (bytes < 0) {
		frctl_error("cannot write %s: %s", path, strerror((int)-bytes));
		return EXIT_FAILURE_;
	}
	if (names.addrs_left_out)
		frctl_error("warning: %s: %" PRIu64 " kernel frame addresses left unnamed (more than %u distinct ones)",
			    path, names.addrs_left_out, FR_KERNEL_NAMES_ADDRS_MAX);
	return 0;
}
