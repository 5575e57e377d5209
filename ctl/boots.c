/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl boots: the boots a store holds, as journalctl --list-boots. */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-id128.h>

#include "../lib/boots.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "paths.h"
#include "window-args.h"

static const char usage[] =
	"Usage: frctl boots [--input FILE] [--json]\n\n"
	"Lists the boots the store holds records of, oldest first, with the\n"
	"index 'frctl dump --boot' takes (0 the newest, -1 the one before...).\n\n"
	"  --input FILE   the boots an incident or bundle file holds instead\n"
	"  --json         a JSON array (index, boot_id, first, last, chunks,\n"
	"                 records)\n";

int verb_boots(struct frctl *f, int argc, char **argv)
{
	struct fr_store_reader *reader = NULL;
	struct fr_boot *boots = NULL;
	const char *input = NULL, *name;
	bool json = false;
	size_t n = 0;
	int k;

	k = frctl_parse_simple(f, argc, argv, "boots", usage, &json, &input, 0);
	if (k >= 0)
		return k;
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	if (input) {
		_cleanup_free_ char *meta = NULL;

		name = input;
		k = frctl_open_incident(input, &reader, &meta);
	} else {
		name = frctl_store_path(f);
		k = frctl_open_store(f, name, &reader);
	}
	if (k < 0)
		return EXIT_FAILURE_;
	k = fr_store_boots(reader, &boots, &n);
	fr_store_reader_free(reader);
	if (k < 0) {
		frctl_error("cannot read %s: %s", name, strerror(-k));
		return EXIT_FAILURE_;
	}

	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		char id[SD_ID128_STRING_MAX], a[64], b[64];
		sd_id128_t sid;
		long idx = (long)i - (long)(n - 1);

		memcpy(sid.bytes, boots[i].boot_id, 16);
		sd_id128_to_string(sid, id);
		fr_format_rfc3339(boots[i].first_ns, a, sizeof(a));
		fr_format_rfc3339(boots[i].last_ns, b, sizeof(b));
		if (json) {
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "index", json_object_new_int64(idx));
			json_object_object_add(o, "boot_id", json_object_new_string(id));
			json_object_object_add(o, "first", json_object_new_string(a));
			json_object_object_add(o, "last", json_object_new_string(b));
			json_object_object_add(o, "chunks", json_object_new_uint64(boots[i].chunks));
			json_object_object_add(o, "records", json_object_new_uint64(boots[i].records));
			json_object_array_add(arr, o);
		} else
			printf("%3ld %s %s — %s %10" PRIu64 " records\n", idx, id, a, b, boots[i].records);
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (n == 0)
		printf("%s holds no records.\n", input ? input : "The store");
	json_object_put(arr);
	free(boots);
	return EXIT_OK;
}
