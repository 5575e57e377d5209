/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/boots.h"
#include "../lib/late-names.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/redact.h"
#include "../lib/str-append.h"
#include "../lib/store-reader.h"
#include "frctl-error.h"
#include "paths.h"
#include "redact-source.h"
#include "source-host.h"
#include "window-args.h"

static const char help_head[] =
	"Window (default: everything in the source):\n"
	"  --last DUR          the last DUR (500ms, 60s, 5m, 2h)\n"
	"  --since T           from T: RFC 3339 (2026-11-21T14:02:00Z), local\n"
	"                      'YYYY-MM-DD HH:MM[:SS]', or a duration ago (-10m)\n"
	"  --until T           up to T (default: the newest record)\n"
	"  --boot B            only boot B: 0 the newest in the store, -1 the one\n"
	"                      before, ..., or a boot id (see 'frctl boots')\n"
	"Source (default: the store):\n"
	"  --incident ID       an incident of the store (see 'frctl incidents')\n"
	"  --input FILE        an incident or bundle file, on any machine (a\n"
	"                      bundle's window is its default window)\n"
	"Filters:\n"
	"  --pid N             records of process N\n"
	"  --comm NAME         records whose command name is NAME\n"
	"  --cgroup PATH       records of cgroup PATH and the cgroups below it\n"
	"                      (/system.slice/nginx.service)\n"
	"  --type T            records of type T:\n";
/* (then the types, lib/record-types.h) */
static const char help_tail[] =
	"  -q, --quiet         no progress on stderr (shown on a terminal for reads\n"
	"                      that take more than a second)\n"
	"Names (of frames recorded unnamed, by their files' build ids):\n"
	"  --debug-dir DIR     debug files in DIR/.build-id/ (default\n"
	"                      /usr/lib/debug); then the debuginfod servers of\n"
	"                      DEBUGINFOD_URLS, given DEBUGINFOD_TIMEOUT seconds\n"
	"                      (default 10) to answer, once\n"
	"  --no-debuginfod     ask no debuginfod server\n"
	"Redaction (for a file that leaves the host; the source is not changed):\n"
	"  --redact[=LIST]     cut what the redact group of the configuration\n"
	"                      says, or the classes of LIST (args, home, tcp,\n"
	"                      marks, urls, comma-separated): arguments past\n"
	"                      argv[0], the user and directories of paths under\n"
	"                      /home and /root, TCP addresses, mark texts and\n"
	"                      freeze reasons, URLs' user, password and query in\n"
	"                      the metadata, each read as \"[redacted]\"\n";

const char *frctl_record_types_list(const char *sep, const char *last_sep)
{
	static char buf[512];
	const uint16_t *t;
	size_t at = 0;
	unsigned n;

	t = fr_record_types_printed(&n);
	for (unsigned i = 0; i < n; i++)
		fr_str_append(buf, sizeof(buf), &at, "%s%s", i == 0 ? "" : i + 1 == n ? last_sep : sep,
		       fr_record_type_name(t[i]));
	return buf;
}

const char *frctl_window_help(void)
{
	static char buf[sizeof(help_head) + sizeof(help_tail) + 1024];
	const uint16_t *t;
	size_t at = 0, col = 0;
	unsigned n;

	if (buf[0])
		return buf;
	fr_str_append(buf, sizeof(buf), &at, "%s", help_head);
	/* the names, comma-separated, in lines of at most 79 columns under
	 * the option's text */
	t = fr_record_types_printed(&n);
	for (unsigned i = 0; i < n; i++) {
		const char *name = fr_record_type_name(t[i]), *comma = i + 1 < n ? "," : "";
		size_t w = strlen(name) + strlen(comma);

		if (col && col + 1 + w <= 79) {
			fr_str_append(buf, sizeof(buf), &at, " %s%s", name, comma);
			col += 1 + w;
		} else {
			fr_str_append(buf, sizeof(buf), &at, "%s%22s%s%s", col ? "\n" : "", "", name, comma);
			col = 22 + w;
		}
	}
	fr_str_append(buf, sizeof(buf), &at, "\n%s", help_tail);
	return buf;
}

void frctl_window_args_init(struct frctl_window_args *a)
{
	*a = (struct frctl_window_args){ .pid = -1, .type = -1, .until_ns = UINT64_MAX };
}

int frctl_window_option(struct frctl_window_args *a, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case O_WIN_LAST: a->last = arg; return 1;
	case O_WIN_SINCE: a->since = arg; return 1;
	case O_WIN_UNTIL: a->until = arg; return 1;
	case O_WIN_BOOT: a->boot = arg; return 1;
	case O_WIN_INPUT: a->input = arg; return 1;
	case 'q':
	case O_WIN_QUIET: a->quiet = true; return 1;
	case O_WIN_NO_DEBUGINFOD: a->no_debuginfod = true; return 1;
	case O_WIN_REDACT: a->redact = arg ? arg : ""; return 1;
	case O_WIN_DEBUG_DIR:
		if (!*arg) {
			frctl_error("--debug-dir: empty directory name (e.g. /usr/lib/debug)");
			return -EINVAL;
		}
		a->debug_dir = arg;
		return 1;
	case O_WIN_INCIDENT:
		if (!*arg || strchr(arg, '/')) {
			frctl_error("--incident: invalid incident id \"%s\" (see 'frctl incidents')", arg);
			return -EINVAL;
		}
		a->incident = arg;
		return 1;
	case O_WIN_PID:
		errno = 0;
		a->pid = strtol(arg, &end, 10);
		if (errno || *end || end == arg || a->pid < 0 || a->pid > 0x7fffffff) {
			frctl_error("--pid: invalid process id \"%s\"", arg);
			return -EINVAL;
		}
		return 1;
	case O_WIN_COMM:
		if (strlen(arg) > FR_REC_COMM_MAX - 1)
			frctl_error("warning: --comm \"%s\" is longer than 15 characters; "
				    "the kernel keeps only the first 15", arg);
		a->comm = arg;
		return 1;
	case O_WIN_CGROUP:
		if (arg[0] != '/') {
			frctl_error("--cgroup: \"%s\" is not a cgroup path (they start with /, e.g. /system.slice)", arg);
			return -EINVAL;
		}
		a->cgroup = arg;
		return 1;
	case O_WIN_TYPE:
		a->type = fr_record_type_from_name(arg);
		if (a->type < 0 || fr_record_type_is_meta((uint16_t)a->type)) {
			frctl_error("--type: unknown record type \"%s\" (%s)", arg, frctl_record_types_list(", ", ", "));
			return -EINVAL;
		}
		return 1;
	}
	return 0;
}


int frctl_window_finish(struct frctl_window_args *a)
{
	uint64_t now = fr_now_ns(CLOCK_REALTIME), d;

	if (a->input && a->incident) {
		frctl_error("--input and --incident cannot be combined");
		return -EINVAL;
	}
	if (a->last && (a->since || a->until)) {
		frctl_error("--last cannot be combined with --since/--until");
		return -EINVAL;
	}
	if (a->last) {
		if (fr_parse_duration(a->last, &d) < 0 || d == 0) {
			frctl_error("--last: invalid duration \"%s\" (e.g. 500ms, 60s, 5m, 2h)", a->last);
			return -EINVAL;
		}
		a->since_ns = d > now ? 0 : now - d;
		a->until_ns = now;
	}
	if (a->since && fr_parse_time(a->since, now, &a->since_ns) < 0) {
		frctl_error("--since: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", a->since);
		return -EINVAL;
	}
	if (a->until && fr_parse_time(a->until, now, &a->until_ns) < 0) {
		frctl_error("--until: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", a->until);
		return -EINVAL;
	}
	if (a->since_ns > a->until_ns) {
		frctl_error("--since is after --until");
		return -EINVAL;
	}
	a->window_given = a->last || a->since || a->until;
	return 0;
}

bool frctl_window_filtered(const struct frctl_window_args *a)
{
	return a->pid >= 0 || a->comm || a->type >= 0 || a->cgroup;
}

static bool cgroup_under(const struct fr_window_entry *e, const char *path)
{
	size_t n = strlen(path);

	/* "/" is every cgroup; "/a" is /a and /a/..., not /ab */
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (!e->cgroup || e->cgroup_len < n || memcmp(e->cgroup, path, n) != 0)
		return false;
	return n == 1 || e->cgroup_len == n || e->cgroup[n] == '/';
}

bool frctl_window_item_shown(const struct frctl_window_args *a, const struct fr_window_item *it)
{
	/* context (keyframes, execs before the window) is not printed; type
	 * and pid are known before decoding.  Gaps concern every process: a
	 * filtered view must still show them */
	if (it->hidden || (a->type >= 0 && it->type != a->type))
		return false;
	return it->type == FR_REC_GAP || a->pid < 0 || it->pid == (uint32_t)a->pid;
}

bool frctl_window_entry_shown(const struct frctl_window_args *a, const struct fr_window_entry *e)
{
	if (e->r.type == FR_REC_GAP)
		return true;
	if (a->comm && strcmp(e->r.comm, a->comm) != 0)
		return false;
	return !a->cgroup || cgroup_under(e, a->cgroup);
}

bool frctl_window_entry(const struct frctl_window_args *a, const struct fr_window *w, size_t i,
			struct fr_window_entry *e)
{
	return frctl_window_item_shown(a, &w->items[i]) && fr_window_get(w, i, e) == 0 &&
	       frctl_window_entry_shown(a, e);
}

int frctl_open_store(struct frctl *f, const char *path, struct fr_store_reader **ret)
{
	int k = fr_store_reader_open(path, ret);

	if (k == -ENOENT || k == -ENOMEDIUM)
		frctl_error("no store at %s (flightrecd has not written there; use --store DIR)", path);
	else if (k == -EACCES)
		frctl_error("cannot read store %s: permission denied (the store is readable by root)", path);
	else if (k < 0)
		frctl_error("cannot open store %s: %s", path, strerror(-k));
	return k;
}

int frctl_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta)
{
	int k = fr_store_reader_open_incident(path, ret, ret_meta);

	if (k == -ENOENT)
		frctl_error("no such file %s (incidents: see 'frctl incidents')", path);
	else if (k == -EBADMSG)
		frctl_error("%s is not an incident or bundle file, or it is damaged", path);
	else if (k == -ENODATA)
		frctl_error("%s is truncated: the file is shorter than the length sealed in its header", path);
	else if (k == -EPROTONOSUPPORT)
		frctl_error("%s was written by a newer flightrec; this frctl cannot read it", path);
	else if (k < 0)
		frctl_error("cannot open %s: %s", path, strerror(-k));
	return k;
}

const char *frctl_meta_string(struct json_object *meta, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(meta, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* --boot: "0", "-N" or an id, resolved against the boots in the source. */
static int select_boot(struct fr_store_reader *reader, const char *spec, struct fr_window_query *q)
{
	struct fr_boot *boots = NULL;
	size_t n = 0;
	int k = fr_store_boots(reader, &boots, &n);

	if (k < 0) {
		frctl_error("cannot read store: %s", strerror(-k));
		return EXIT_FAILURE_;
	}
	k = fr_boot_lookup(boots, n, spec);
	if (k == -EINVAL) {
		frctl_error("--boot: invalid boot \"%s\" (0, -N or a 32-digit boot id)", spec);
		free(boots);
		return EXIT_USAGE;
	}
	if (k < 0) {
		if (n)
			frctl_error("--boot %s: no such boot here (%zu boots: 0 to -%zu; see 'frctl boots')",
				    spec, n, n - 1);
		else
			frctl_error("--boot %s: there are no records", spec);
		free(boots);
		return EXIT_FAILURE_;
	}
	q->one_boot = true;
	memcpy(q->boot_id, boots[k].boot_id, 16);
	free(boots);
	return 0;
}

/* After a second, a line on the terminal rewritten in place. */
static void on_progress(size_t done, size_t total, void *userdata)
{
	struct frctl_source *s = userdata;

	if (!s->progress_shown && fr_now_ns(CLOCK_MONOTONIC) - s->progress_start < NSEC_PER_SEC)
		return;
	if (done < total && s->progress_shown && done % 16)
		return;
	fprintf(stderr, "\rfrctl: read %zu of %zu chunks (%zu%%)\033[K", done, total, total ? done * 100 / total : 100);
	s->progress_shown = true;
	if (done == total)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

void frctl_source_progress_end(struct frctl_source *s)
{
	s->q.progress = NULL;
	if (s->progress_shown)
		fputs("\r\033[K", stderr);
	s->progress_shown = false;
}

/* A bundle carries the window it was cut to: it is the default.  The
 * metadata is the file's, checked only by its CRC: every member may be
 * missing or of any type (or JSON null, which json-c returns as NULL). */
static void bundle_window(struct frctl_source *s, const struct frctl_window_args *a)
{
	struct json_object *kind, *since, *until;

	if (a->window_given || !json_object_object_get_ex(s->meta, "kind", &kind) ||
	    !json_object_is_type(kind, json_type_string) || strcmp(json_object_get_string(kind), "bundle") != 0 ||
	    !json_object_object_get_ex(s->meta, "since_ns", &since) || !json_object_is_type(since, json_type_int) ||
	    !json_object_object_get_ex(s->meta, "until_ns", &until) || !json_object_is_type(until, json_type_int))
		return;
	s->q.since_ns = json_object_get_uint64(since);
	s->q.until_ns = json_object_get_uint64(until);
}

/* Once a run, from the thread naming a frame: the frames stay as they
 * were. */
static void on_servers_failed(int err, const char *urls, void *userdata)
{
	const struct frctl_source *s = userdata;

	if (err == -ETIMEDOUT)
		frctl_error("warning: debuginfod did not answer (%s: nothing within %u s); frames stay unnamed", urls,
			    s->debuginfod_timeout_s);
	else
		frctl_error("warning: debuginfod did not answer (%s: %s); frames stay unnamed", urls, strerror(-err));
}

/* Names for the frames not named at capture: opens nothing before a frame
 * needs it.  DEBUGINFOD_TIMEOUT, libdebuginfod's wait for a server to
 * start sending, bounds the whole wait here (its own default, 90 s, and
 * retries are far too long for a reader). */
static int late_names_new(const struct frctl_window_args *a, struct frctl_source *s)
{
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	struct fr_late_names_params p = { .debug_dir = a->debug_dir, .no_debuginfod = a->no_debuginfod,
					  .servers_failed = on_servers_failed, .userdata = s };
	unsigned long secs = 0;
	char *end;

	/* whole seconds, up to an hour; anything else: the default */
	if (t) {
		errno = 0;
		secs = strtoul(t, &end, 10);
		if (errno || *end || end == t || secs > 3600)
			secs = 0;
	}
	s->debuginfod_timeout_s = secs ? (unsigned)secs : (unsigned)(FR_LATE_NAMES_TIMEOUT_NS / NSEC_PER_SEC);
	p.timeout_ns = s->debuginfod_timeout_s * NSEC_PER_SEC;
	return fr_late_names_new(&p, &s->late_names);
}

int frctl_source_open(struct frctl *f, const struct frctl_window_args *a, struct frctl_source *s)
{
	int k;

	*s = (struct frctl_source){ .q = { .since_ns = a->since_ns, .until_ns = a->until_ns, .skip_exe = !a->need_exe,
					   .line = a->line, .line_userdata = a->line_userdata,
					   .lines_only = a->lines_only } };
	/* for tests: the reader's slices this many bytes of payload (1: a
	 * chunk each), which must not change any output */
	const char *slice = getenv("FRCTL_SLICE_BYTES");
	if (slice)
		s->q.slice_bytes = strtoul(slice, NULL, 10);
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	if (a->input || a->incident) {
		_cleanup_free_ char *path = NULL, *meta = NULL;

		if (a->incident && asprintf(&path, "%s/incidents/%s.fri", frctl_store_path(f), a->incident) < 0)
			return EXIT_FAILURE_;
		s->name = a->input ? a->input : path;
		k = frctl_open_incident(s->name, &s->reader, &meta);
		if (k < 0)
			return EXIT_FAILURE_;
		s->is_file = true;
		s->meta = json_tokener_parse(meta);
		if (a->incident)
			s->name = a->incident;
		bundle_window(s, a);
	} else {
		s->name = frctl_store_path(f);
		if (frctl_open_store(f, s->name, &s->reader) < 0)
			return EXIT_FAILURE_;
	}
	/* before --redact: the copy read then is a file without them */
	s->hosts = frctl_source_hosts_load(fr_store_reader_dir_fd(s->reader), s->meta);
	if (a->boot && (k = select_boot(s->reader, a->boot, &s->q)) != 0)
		return k;
	if (a->redact && (k = frctl_source_redact(f, a, s)) != 0)
		return k;
	/* streamed, the window loads while it prints: the progress line
	 * would cut into the output on the same terminal */
	if (!a->quiet && isatty(STDERR_FILENO) && !(a->stream && isatty(STDOUT_FILENO))) {
		s->progress_start = fr_now_ns(CLOCK_MONOTONIC);
		s->q.progress = on_progress;
		s->q.userdata = s;
	}
	if (a->follow)
		k = 0;
	else if (a->stream)
		k = fr_window_stream_open(s->reader, &s->q, &s->w);
	else {
		k = fr_window_load(s->reader, &s->q, &s->w);
		frctl_source_progress_end(s);
	}
	if (k < 0) {
		frctl_error("cannot read %s: %s", s->name, strerror(-k));
		return EXIT_FAILURE_;
	}
	k = late_names_new(a, s);
	if (k < 0) {
		frctl_error("out of memory");
		return EXIT_FAILURE_;
	}
	if (s->w)
		fr_window_set_late_names(s->w, s->late_names);
	return 0;
}

int frctl_source_check(const struct frctl_source *s)
{
	struct fr_store_reader_stats rs;

	fr_store_reader_get_stats(s->reader, &rs);
	if (rs.chunks_unsupported || rs.segments_unsupported)
		frctl_error("warning: %" PRIu64 " segments and %" PRIu64 " chunks were written in a newer format "
			    "than this frctl knows and were skipped", rs.segments_unsupported, rs.chunks_unsupported);
	/* a store has torn tails after crashes; a file written whole and
	 * synced that fails its checksums, or was cut short (its chunks never
	 * reach the window: counted by the reader's walk), is corrupt */
	if (s->is_file && s->redact_lost) {
		frctl_error("%s is damaged: %" PRIu64 " chunks failed their checksums or did not decode", s->name,
			    s->redact_lost);
		return EXIT_FAILURE_;
	}
	if (s->redact_lost)
		frctl_error("warning: %" PRIu64 " chunks of this window were damaged or overwritten while read, "
			    "and were skipped", s->redact_lost);
	if (s->is_file && (s->w->chunks_damaged || s->w->records_bad || rs.chunks_damaged)) {
		frctl_error("%s is damaged: %" PRIu64 " chunks failed their checksums, %" PRIu64
			    " records did not decode", s->name, MAX(s->w->chunks_damaged, rs.chunks_damaged),
			    s->w->records_bad);
		return EXIT_FAILURE_;
	}
	/* chunks lost inside a segment (a torn tail after a crash is not
	 * counted): their headers are gone, so is their time, and no window
	 * count has them */
	if (rs.regions_damaged)
		frctl_error("warning: %" PRIu64 " damaged regions of the store (chunk headers that failed their "
			    "checksums, with valid chunks after them) were skipped; their records and times are unknown",
			    rs.regions_damaged);
	if (s->w->records_unknown)
		frctl_error("warning: %" PRIu64 " records of types this frctl does not know (written by a newer "
			    "flightrecd) were skipped", s->w->records_unknown);
	if (!s->w->chunks_damaged && !s->w->records_bad)
		return 0;
	frctl_error("warning: %" PRIu64 " damaged chunks and %" PRIu64 " undecodable records in this window were skipped",
		    s->w->chunks_damaged, s->w->records_bad);
	return 0;
}

void frctl_source_done(struct frctl_source *s)
{
	fr_window_free(s->w);
	fr_late_names_free(s->late_names);
	fr_store_reader_free(s->reader);
	json_object_put(s->meta);
	json_object_put(s->hosts);
	fr_redactor_free(s->redactor);
	*s = (struct frctl_source){};
}
