/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl incidents [--json]: the incident files of the store, oldest first. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/incident.h"
#include "../lib/parse.h"
#include "frctl.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
			       &json, 0);
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
		} else
			json_object_object_add(o, "error", json_object_new_string("not readable"));
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
	else
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *o = json_object_array_get_idx(arr, i), *v;
			struct json_object *trig = json_object_object_get(o, "triggers");
			char sz[32];
			if (json_object_object_get_ex(o, "error", &v)) {
				printf("%s  %s: %s\n", json_object_get_string(json_object_object_get(o, "id")),
				       json_object_get_string(json_object_object_get(o, "path")), json_object_get_string(v));
				continue;
			}
			printf("%s  %s .. %s  rules %s  triggers %zu  %s",
			       json_object_get_string(json_object_object_get(o, "id")),
			       json_object_get_string(json_object_object_get(o, "start")) ?: "?",
			       json_object_get_string(json_object_object_get(o, "end")) ?: "?",
			       json_object_to_json_string_ext(json_object_object_get(o, "rules"), JSON_C_TO_STRING_PLAIN),
			       json_object_is_type(trig, json_type_array) ? json_object_array_length(trig) : 0,
			       fr_format_size(json_object_get_uint64(json_object_object_get(o, "bytes")), sz, sizeof(sz)));
			if (json_object_object_get_ex(o, "reason", &v) && v)
				printf("  reason: %s", json_object_get_string(v));
			printf("\n");
		}
	json_object_put(arr);
	return EXIT_OK;
}
