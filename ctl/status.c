/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl status: the daemon's view (rates, per-CPU and per-source counts)
 * from the control socket, plus the store's own view (bytes, time span)
 * read from disk, so it answers even when the daemon is down.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "../lib/parse.h"
#include "../lib/store-reader.h"
#include "../lib/store.h"
#include "../lib/macro.h"
#include "control-client.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "paths.h"

struct span {
	uint64_t oldest, newest, chunks, records;
};

static int span_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct span *s = userdata;
	uint64_t first = ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
	uint64_t last = ref->info.last_ts + (uint64_t)ref->info.realtime_offset;

	if (!s->chunks || first < s->oldest)
		s->oldest = first;
	if (!s->chunks || last > s->newest)
		s->newest = last;
	s->chunks++;
	s->records += ref->info.nrecords;
	return 0;
}

static struct json_object *time_or_null(uint64_t wall_ns, bool have)
{
	char buf[64];
	return have ? json_object_new_string(fr_format_rfc3339(wall_ns, buf, sizeof(buf))) : NULL;
}

/* The bound the configuration sets for the store at @path: store.size,
 * or what "auto" comes to on its file system; 0 if not known (no store
 * there yet). */
static uint64_t conf_bound(const struct fr_conf *c, const char *path)
{
	_cleanup_close_ int fd = -EBADF;
	uint64_t size, fs;

	if (c->store_size)
		return c->store_size;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fr_store_auto_size(fd, c->store_segments, fr_conf_max_chunk(c), &size, &fs) < 0)
		return 0;
	return size;
}

static struct json_object *store_json(const char *path, uint64_t bound, int *ret_err)
{
	struct json_object *o = json_object_new_object();
	struct fr_store_reader *r = NULL;
	struct fr_store_reader_stats st = {};
	struct span sp = {};
	int k;

	json_object_object_add(o, "path", json_object_new_string(path));
	k = fr_store_reader_open(path, &r);
	if (k >= 0) {
		k = fr_store_reader_foreach(r, span_cb, &sp);
		fr_store_reader_get_stats(r, &st);
		fr_store_reader_free(r);
	}
	*ret_err = k;
	json_object_object_add(o, "bytes_used", json_object_new_uint64(st.bytes_on_disk));
	json_object_object_add(o, "bytes_bound", bound ? json_object_new_uint64(bound) : NULL);
	json_object_object_add(o, "chunks", json_object_new_uint64(sp.chunks));
	json_object_object_add(o, "records", json_object_new_uint64(sp.records));
	json_object_object_add(o, "oldest", time_or_null(sp.oldest, sp.chunks > 0));
	json_object_object_add(o, "newest", time_or_null(sp.newest, sp.chunks > 0));
	if (k < 0)
		json_object_object_add(o, "error", json_object_new_string(strerror(-k)));
	return o;
}

static uint64_t get_u64(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

/* One line: the incidents since the daemon started, and its spare file
 * (the state names are those of the JSON). */
static void print_incidents(struct json_object *tr)
{
	struct json_object *spare = json_object_object_get(tr, "spare"), *err;
	char a[32];

	if (!tr)
		return;
	printf("  incidents: %" PRIu64 " written, %" PRIu64 " failed, %" PRIu64 " open", get_u64(tr, "written"),
	       get_u64(tr, "failed"), get_u64(tr, "open"));
	if (get_u64(tr, "not_renamed"))
		printf(", %" PRIu64 " not renamed", get_u64(tr, "not_renamed"));
	if (spare) {
		printf("; spare file %s", json_object_get_string(json_object_object_get(spare, "state")));
		if (get_u64(spare, "bytes"))
			printf(" (%s)", fr_format_size(get_u64(spare, "bytes"), a, sizeof(a)));
		if (json_object_object_get_ex(spare, "error", &err) && err)
			printf(": %s", json_object_get_string(err));
		printf(", used by %" PRIu64, get_u64(spare, "used"));
	}
	putchar('\n');
	/* what each rule did: a crash loop shows here as joined/suppressed */
	struct json_object *rules = json_object_object_get(tr, "rules");
	if (!json_object_is_type(rules, json_type_object))
		return;
	json_object_object_foreach(rules, name, r)
		printf("  rule %-12s %-16s fired %" PRIu64 ", joined %" PRIu64 ", suppressed %" PRIu64 "\n", name,
		       json_object_get_string(json_object_object_get(r, "condition")), get_u64(r, "fired"),
		       get_u64(r, "joined"), get_u64(r, "suppressed"));
}

/* One line: where the Prometheus textfile goes, and whether it gets there. */
static void print_textfile(struct json_object *tf)
{
	const char *path = json_object_get_string(json_object_object_get(tf, "path"));
	const char *err = json_object_get_string(json_object_object_get(tf, "error"));

	if (!tf)
		return;
	if (!path) {
		printf("  prometheus textfile: off\n");
		return;
	}
	printf("  prometheus textfile %s: %" PRIu64 " written, %" PRIu64 " failed%s%s\n", path, get_u64(tf, "written"),
	       get_u64(tf, "failed"), err ? ", now: " : "", err ? err : "");
}

static void print_text(struct json_object *st)
{
	struct json_object *running, *v, *store;
	char a[32], b[32];

	json_object_object_get_ex(st, "running", &running);
	json_object_object_get_ex(st, "store", &store);
	if (json_object_get_boolean(running)) {
		json_object_object_get_ex(st, "records_per_s", &v);
		printf("flightrecd: running (pid %" PRIu64 ", up %.0fs), %.1f records/s\n",
		       get_u64(st, "pid"),
		       json_object_get_double(json_object_object_get(st, "uptime_s")),
		       json_object_get_double(v));
		const char *ns = json_object_get_string(json_object_object_get(st, "pid_namespace"));
		if (ns && strcmp(ns, "private") == 0)
			printf("  in a private PID namespace: processes not named from /proc, user stacks not unwound "
			       "(run it with the host's: --pid=host, hostPID: true)\n");
		struct json_object *cpus = json_object_object_get(st, "per_cpu");
		for (size_t i = 0; i < json_object_array_length(cpus); i++) {
			struct json_object *c = json_object_array_get_idx(cpus, i);
			printf("  cpu%-3" PRIu64 " emitted %-10" PRIu64 " delivered %-10" PRIu64
			       " dropped %-8" PRIu64 " lost in writes %" PRIu64 "\n",
			       get_u64(c, "cpu"), get_u64(c, "emitted"), get_u64(c, "delivered"),
			       get_u64(c, "dropped"), get_u64(c, "lost_write"));
		}
		json_object_object_foreach(json_object_object_get(st, "sources"), name, s) {
			bool en = json_object_get_boolean(json_object_object_get(s, "enabled"));
			bool at = json_object_get_boolean(json_object_object_get(s, "attached"));
			printf("  source %-8s %-13s records %-10" PRIu64 " dropped %" PRIu64 "\n", name,
			       !en ? "disabled" : at ? "attached" : "FAILED", get_u64(s, "records"),
			       get_u64(s, "dropped"));
		}
		struct json_object *smp = json_object_object_get(st, "sampler"), *sy;
		const char *ev = json_object_get_string(json_object_object_get(smp, "event"));
		if (ev) {
			printf("  sampler %s at %" PRIu64 " Hz%s", ev, get_u64(smp, "hz"),
			       json_object_get_boolean(json_object_object_get(smp, "pmu_counters")) ? ", PMU counters in metrics"
												  : ", no PMU counters");
			if (json_object_object_get_ex(smp, "symbols", &sy))
				printf("; frames named: user %" PRIu64 " of %" PRIu64 ", kernel %" PRIu64 " of %" PRIu64,
				       get_u64(sy, "user_named"),
				       get_u64(sy, "user_named") + get_u64(sy, "user_module_only") + get_u64(sy, "user_unknown"),
				       get_u64(sy, "kernel_named"), get_u64(sy, "kernel_named") + get_u64(sy, "kernel_unnamed"));
			putchar('\n');
			/* the parser helper, when it has failed: names were lost meanwhile */
			struct json_object *po;
			if (json_object_object_get_ex(smp, "parser", &po) &&
			    get_u64(po, "crashes") + get_u64(po, "timeouts") + get_u64(po, "bad_replies") +
					    get_u64(po, "start_failed") >
				    0)
				printf("  parser flightrec-parse: %" PRIu64 " crashed, %" PRIu64 " timed out, %" PRIu64
				       " malformed, %" PRIu64 " failed to start; %" PRIu64 " stacks unnamed meanwhile, %" PRIu64
				       " files held back\n",
				       get_u64(po, "crashes"), get_u64(po, "timeouts"), get_u64(po, "bad_replies"),
				       get_u64(po, "start_failed"), get_u64(po, "skipped"), get_u64(po, "quarantined"));
		}
		/* Python frames, once a CPython has been seen; a read that
		 * failed is not a thread without Python state: apart */
		struct json_object *py = json_object_object_get(st, "python"), *pst;
		if (py && get_u64(py, "executables") + get_u64(py, "executables_unknown_version") > 0 &&
		    json_object_object_get_ex(py, "stacks", &pst))
			printf("  python: %" PRIu64 " interpreters walked, %" PRIu64 " of another version; %" PRIu64
			       " stacks walked, %" PRIu64 " cut, %" PRIu64 " without Python state, %" PRIu64
			       " with a failed read; %" PRIu64 " frames, %" PRIu64 " unnamed\n",
			       get_u64(py, "executables"), get_u64(py, "executables_unknown_version"),
			       get_u64(pst, "walked"), get_u64(pst, "cut"),
			       get_u64(pst, "no_thread") + get_u64(pst, "no_frame"), get_u64(pst, "unreadable"),
			       get_u64(py, "frames"), get_u64(py, "frames_unnamed"));
		print_incidents(json_object_object_get(st, "triggers"));
		print_textfile(json_object_object_get(st, "textfile"));
	} else
		printf("flightrecd: not running\n");

	printf("store %s: %s used", json_object_get_string(json_object_object_get(store, "path")),
	       fr_format_size(get_u64(store, "bytes_used"), a, sizeof(a)));
	if (json_object_object_get(store, "bytes_bound"))
		printf(" of %s", fr_format_size(get_u64(store, "bytes_bound"), b, sizeof(b)));
	printf(", %" PRIu64 " records in %" PRIu64 " chunks\n", get_u64(store, "records"),
	       get_u64(store, "chunks"));
	if (json_object_object_get(store, "oldest"))
		printf("  oldest %s\n  newest %s\n",
		       json_object_get_string(json_object_object_get(store, "oldest")),
		       json_object_get_string(json_object_object_get(store, "newest")));
	if (json_object_object_get(store, "error"))
		printf("  store not readable: %s\n",
		       json_object_get_string(json_object_object_get(store, "error")));
}

int verb_status(struct frctl *f, int argc, char **argv)
{
	struct json_object *req, *st = NULL, *store, *dstore;
	const char *store_path;
	uint64_t bound = 0;
	bool json = false, running;
	int k, serr;

	k = frctl_parse_simple(f, argc, argv, "status",
			       "Usage: frctl status [--json]\n\n"
			       "Daemon state (running, pid, uptime, records/s, per-CPU emitted/delivered/\n"
			       "dropped, per-source counts, incidents and the spare incident file, the\n"
			       "Prometheus textfile) and the store's use and time span.\n"
			       "Exit status 3 when the daemon is not running.\n",
			       &json, NULL, 0);
	if (k >= 0)
		return k;
	req = json_object_new_object();
	json_object_object_add(req, "verb", json_object_new_string("status"));
	k = frctl_request(f, req, "status", true, &st);
	json_object_put(req);
	if (k > 0)
		return k;
	running = k == 0 && json_object_is_type(st, json_type_object) &&
		  !json_object_object_get_ex(st, "error", NULL);
	if (k < 0 && k != -ENOENT && k != -ECONNREFUSED)
		frctl_error("warning: cannot query flightrecd: %s", strerror(-k));
	if (!running) {
		json_object_put(st);
		st = json_object_new_object();
		json_object_object_add(st, "running", json_object_new_boolean(0));
	}

	/* the store the daemon writes, else the one we were told about */
	store_path = frctl_store_path(f);
	if (running && json_object_object_get_ex(st, "store", &dstore)) {
		store_path = json_object_get_string(json_object_object_get(dstore, "path"));
		bound = get_u64(dstore, "bytes_bound");
	} else if (f->store_arg == NULL || f->config_explicit)
		bound = conf_bound(&f->conf, store_path);
	store = store_json(store_path, bound, &serr);
	if (running && json_object_object_get_ex(st, "store", &dstore)) {
		json_object_object_foreach(dstore, key, val) {
			if (!json_object_object_get_ex(store, key, NULL))
				json_object_object_add(store, key, json_object_get(val));
		}
	}
	json_object_object_add(st, "store", store);

	if (json)
		printf("%s\n", json_object_to_json_string_ext(st, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print_text(st);
	json_object_put(st);
	return running ? EXIT_OK : EXIT_NOT_RUNNING;
}
