/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl incidents [--json]: the incident files of the store, oldest first. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/incident.h"
#include "../lib/out-buf.h"
#include "../lib/parse.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "paths.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Text from the incident files (the reason is what 'frctl freeze --reason'
 * was given) goes to a terminal: control characters as \xNN, never raw. */
static void put_safe(struct fr_out *o, const char *s)
{
	if (s)
		fr_out_safe(o, s, strlen(s));
	else
		fr_out_putc(o, '?');
}

static void put_field(struct fr_out *o, struct json_object *obj, const char *key)
{
	put_safe(o, json_object_get_string(json_object_object_get(obj, key)));
}

/* One line per incident (frctl(1) shows it); rules as a JSON-like array
 * whose names are escaped like the rest. */
static int print_text(struct json_object *arr)
{
	struct fr_out o;
	int k = fr_out_init(&o, stdout);

	if (k < 0) {
		errno = -k;
		return k;
	}
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *v;
		struct json_object *trig = json_object_object_get(e, "triggers");
		struct json_object *rules = json_object_object_get(e, "rules");
		char sz[32];

		put_field(&o, e, "id");
		fr_out_puts(&o, "  ");
		if (json_object_object_get_ex(e, "error", &v)) {
			put_field(&o, e, "path");
			fr_out_puts(&o, ": ");
			put_safe(&o, json_object_get_string(v));
			fr_out_putc(&o, '\n');
			continue;
		}
		put_field(&o, e, "start");
		fr_out_puts(&o, " .. ");
		put_field(&o, e, "end");
		fr_out_puts(&o, "  rules [");
		for (size_t r = 0; json_object_is_type(rules, json_type_array) && r < json_object_array_length(rules); r++) {
			fr_out_puts(&o, r ? ",\"" : "\"");
			put_safe(&o, json_object_get_string(json_object_array_get_idx(rules, r)));
			fr_out_putc(&o, '"');
		}
		fr_out_printf(&o, "]  triggers %" PRIu64 "  %s",
			      (json_object_is_type(trig, json_type_array) ? json_object_array_length(trig) : 0) +
				      json_object_get_uint64(json_object_object_get(e, "triggers_unlisted")),
			      fr_format_size(json_object_get_uint64(json_object_object_get(e, "bytes")), sz, sizeof(sz)));
		if (json_object_object_get_ex(e, "reason", &v) && v) {
			fr_out_puts(&o, "  reason: ");
			put_safe(&o, json_object_get_string(v));
		}
		fr_out_putc(&o, '\n');
	}
	k = fr_out_end(&o);
	if (k < 0)
		errno = -k;
	return k;
}

int verb_incidents(struct frctl *f, int argc, char **argv)
{
	struct json_object *arr = json_object_new_array();
	char **names = NULL, *dir = NULL;
	size_t n = 0, cap = 0;
	bool json = false;
	struct dirent *de;
	DIR *d;
	int k;

	k = frctl_parse_simple(f, argc, argv, "incidents",
			       "Usage: frctl incidents [--json]\n\n"
			       "Lists the incidents (frozen windows) of the store, oldest first: id,\n"
			       "rules, reason, window, triggers, path and size.  Read one with\n"
			       "'frctl dump --incident ID'.\n",
			       &json, NULL, 0);
	if (k >= 0) {
		json_object_put(arr);
		return k;
	}
	if (frctl_load_conf(f) < 0 || asprintf(&dir, "%s/%s", frctl_store_path(f), FR_INCIDENT_DIR) < 0) {
		json_object_put(arr);
		return EXIT_USAGE;
	}
	d = opendir(dir);
	if (!d && errno != ENOENT) {
		frctl_error("cannot read %s: %s", dir, strerror(errno));
		free(dir);
		json_object_put(arr);
		return EXIT_FAILURE_;
	}
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, FR_INCIDENT_SUFFIX) != 0)
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*v));
			if (!v)
				break;
			names = v;
		}
		names[n++] = strdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);

	for (size_t i = 0; i < n; i++) {
		char path[4096], *meta = NULL;
		struct fr_store_reader *r = NULL;
		struct json_object *m, *o = json_object_new_object();
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		k = fr_store_reader_open_incident(path, &r, &meta);
		fr_store_reader_free(r);
		m = k >= 0 ? json_tokener_parse(meta) : NULL;
		free(meta);
		names[i][strlen(names[i]) - 4] = 0;
		json_object_object_add(o, "id", json_object_new_string(names[i]));
		if (m) {
			static const char *const keys[] = { "rules", "reason", "start", "end", "triggers" };
			for (size_t kk = 0; kk < sizeof(keys) / sizeof(keys[0]); kk++) {
				struct json_object *v;
				json_object_object_add(o, keys[kk], json_object_object_get_ex(m, keys[kk], &v) ? json_object_get(v) : NULL);
			}
			/* only where triggers beyond the list joined */
			struct json_object *u;
			if (json_object_object_get_ex(m, "triggers_unlisted", &u))
				json_object_object_add(o, "triggers_unlisted", json_object_get(u));
		} else
			json_object_object_add(o, "error", json_object_new_string(k == -ENODATA ? "truncated" : "not readable"));
		json_object_put(m);
		json_object_object_add(o, "path", json_object_new_string(path));
		json_object_object_add(o, "bytes", json_object_new_uint64(stat(path, &st) == 0 ? (uint64_t)st.st_size : 0));
		json_object_array_add(arr, o);
		free(names[i]);
	}
	free(names);
	free(dir);

	if (json)
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (json_object_array_length(arr) == 0)
		printf("No incidents.\n");
	else if (print_text(arr) < 0) {
		frctl_error("cannot write the list: %s", strerror(errno));
		json_object_put(arr);
		return EXIT_FAILURE_;
	}
	json_object_put(arr);
	return EXIT_OK;
}
