/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl dump: the records of a window, filtered, in time order. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/boots.h"
#include "../lib/record-json.h"
#include "../lib/store-reader.h"
#include "frctl.h"

enum format { FMT_TEXT, FMT_JSON, FMT_FOLDED };

struct dump_opts {
	uint64_t since, until;
	enum format format;
	long pid;
	const char *comm;
	int type;
	const char *output;
	const char *boot;
	const char *input;    /* an incident or bundle file */
	const char *incident; /* an incident id in the store */
	bool stats;
};

static void help(void)
{
	printf("Usage: frctl dump [--last DUR | --since T [--until T]] [OPTIONS]\n"
	       "\n"
	       "Prints the recorded records of a time window, oldest first, merged across\n"
	       "CPUs. Reads the store directly: works with the daemon stopped.\n"
	       "\n"
	       "Window (default: everything in the store):\n"
	       "  --last DUR          the last DUR (500ms, 60s, 5m, 2h)\n"
	       "  --since T           from T: RFC 3339 (2026-11-21T14:02:00Z), local\n"
	       "                      'YYYY-MM-DD HH:MM[:SS]', or a duration ago (-10m)\n"
	       "  --until T           up to T (default: the newest record)\n"
	       "  --boot B            only boot B: 0 the newest in the store, -1 the one\n"
	       "                      before, ..., or a boot id (see 'frctl boots')\n"
	       "Source (default: the store):\n"
	       "  --incident ID       an incident of the store (see 'frctl incidents')\n"
	       "  --input FILE        an incident file, on any machine\n"
	       "Filters:\n"
	       "  --pid N             records of process N\n"
	       "  --comm NAME         records whose command name is NAME\n"
	       "  --type T            exec, exit, fork, syscall, offcpu, runq, block, oom,\n"
	       "                      signal, tcp, switch, sample, mark, metrics, trigger\n"
	       "                      or gap\n"
	       "Output:\n"
	       "  --format FMT        text (default; for people), json (JSON Lines) or\n"
	       "                      folded (the CPU samples as collapsed stacks,\n"
	       "                      'comm;outer;...;leaf count', for flame graphs)\n"
	       "  -o, --output FILE   write to FILE (created whole or not at all)\n"
	       "  --stats             after the dump, print on stderr how much of the store\n"
	       "                      was read to find and decode the window\n");
}

static bool matches(const struct dump_opts *o, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;

	/* context (keyframes, execs before the window) is not printed */
	if (e->hidden)
		return false;
	/* gaps concern every process: a filtered view must still show them */
	if (r->type == FR_REC_GAP)
		return o->type < 0 || o->type == FR_REC_GAP;
	if (o->pid >= 0 && r->pid != (uint32_t)o->pid)
		return false;
	if (o->comm && strcmp(r->comm, o->comm) != 0)
		return false;
	if (o->type >= 0 && r->type != o->type)
		return false;
	return true;
}

static uint64_t wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int parse_args(struct frctl *f, int argc, char **argv, struct dump_opts *o)
{
	enum { O_LAST = 0x200, O_SINCE, O_UNTIL, O_FORMAT, O_PID, O_COMM, O_TYPE, O_BOOT, O_STATS, O_INPUT, O_INCIDENT };
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		{ "last", required_argument, NULL, O_LAST },
		{ "since", required_argument, NULL, O_SINCE },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "pid", required_argument, NULL, O_PID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "type", required_argument, NULL, O_TYPE },
		{ "output", required_argument, NULL, 'o' },
		{ "boot", required_argument, NULL, O_BOOT },
		{ "stats", no_argument, NULL, O_STATS },
		{ "input", required_argument, NULL, O_INPUT },
		{ "incident", required_argument, NULL, O_INCIDENT },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *last = NULL, *since = NULL, *until = NULL;
	uint64_t now = wall_now(), d;
	char *end;
	int c;

	*o = (struct dump_opts){ .until = UINT64_MAX, .pid = -1, .type = -1 };
	while ((c = getopt_long(argc, argv, "c:s:o:h", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		switch (c) {
		case O_LAST: last = optarg; break;
		case O_SINCE: since = optarg; break;
		case O_UNTIL: until = optarg; break;
		case O_FORMAT:
			if (strcmp(optarg, "text") == 0)
				o->format = FMT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = FMT_JSON;
			else if (strcmp(optarg, "folded") == 0)
				o->format = FMT_FOLDED;
			else {
				frctl_error("--format: unknown format \"%s\" (text, json, folded)", optarg);
				return -EINVAL;
			}
			break;
		case O_PID:
			errno = 0;
			o->pid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->pid < 0 || o->pid > 0x7fffffff) {
				frctl_error("--pid: invalid process id \"%s\"", optarg);
				return -EINVAL;
			}
			break;
		case O_COMM:
			if (strlen(optarg) > FR_REC_COMM_MAX - 1)
				frctl_error("warning: --comm \"%s\" is longer than 15 characters; "
					    "the kernel keeps only the first 15", optarg);
			o->comm = optarg;
			break;
		case O_TYPE:
			o->type = fr_record_type_from_name(optarg);
			if (o->type < 0 || fr_record_is_meta(&(struct fr_record){ .type = (uint16_t)o->type })) {
				frctl_error("--type: unknown record type \"%s\" (exec, exit, fork, syscall, offcpu, runq, "
					    "block, oom, signal, tcp, switch, sample, mark, metrics, trigger, gap)", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case O_BOOT:
			o->boot = optarg;
			break;
		case O_STATS:
			o->stats = true;
			break;
		case O_INPUT:
			o->input = optarg;
			break;
		case O_INCIDENT:
			if (!*optarg || strchr(optarg, '/')) {
				frctl_error("--incident: invalid incident id \"%s\" (see 'frctl incidents')", optarg);
				return -EINVAL;
			}
			o->incident = optarg;
			break;
		case 'h':
			help();
			return 1;
		default:
			frctl_bad_option("dump", argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		frctl_error("dump: unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (o->input && o->incident) {
		frctl_error("--input and --incident cannot be combined");
		return -EINVAL;
	}
	if (last && (since || until)) {
		frctl_error("--last cannot be combined with --since/--until");
		return -EINVAL;
	}
	if (last) {
		if (fr_parse_duration(last, &d) < 0 || d == 0) {
			frctl_error("--last: invalid duration \"%s\" (e.g. 500ms, 60s, 5m, 2h)", last);
			return -EINVAL;
		}
		o->since = d > now ? 0 : now - d;
		o->until = now;
	}
	if (since && fr_parse_time(since, now, &o->since) < 0) {
		frctl_error("--since: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", since);
		return -EINVAL;
	}
	if (until && fr_parse_time(until, now, &o->until) < 0) {
		frctl_error("--until: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", until);
		return -EINVAL;
	}
	if (o->since > o->until) {
		frctl_error("--since is after --until");
		return -EINVAL;
	}
	return 0;
}

/* -o FILE: write to a temporary file beside it, rename when complete. */
static int open_output(const char *path, char **ret_tmp, FILE **ret)
{
	_cleanup_free_ char *tmp = NULL;
	int fd;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		int k = negative_errno();
		frctl_error("cannot create %s: %s", path, strerror(-k));
		return k;
	}
	(void)fchmod(fd, 0640);
	*ret = fdopen(fd, "w");
	if (!*ret) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	*ret_tmp = TAKE_PTR(tmp);
	return 0;
}

struct json_object *fr_window_entry_to_json(struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
	struct fr_record_context ctx = {
		.wall_ns = e->wall_ns, .boot_id = w->chunks[e->chunk].boot_id,
		.cgroup = e->cgroup, .cgroup_len = e->cgroup_len,
		.exe = e->exe, .exe_len = e->exe_len, .kernel_thread = e->kernel_thread,
	};

	if (e->r.type == FR_REC_SAMPLE) {
		ctx.nframes = fr_window_frames(w, e, frames, FR_SAMPLE_FRAMES_MAX);
		ctx.frames = ctx.nframes >= 0 ? frames : NULL;
	}
	return fr_record_to_json(&e->r, &ctx);
}

/* --boot: "0", "-N" or an id, resolved against the boots in the store. */
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
			frctl_error("--boot %s: no such boot in the store (it holds %zu: 0 to -%zu; see 'frctl boots')",
				    spec, n, n - 1);
		else
			frctl_error("--boot %s: the store holds no records", spec);
		free(boots);
		return EXIT_FAILURE_;
	}
	q->one_boot = true;
	memcpy(q->boot_id, boots[k].boot_id, 16);
	free(boots);
	return 0;
}

/* --stats: what finding and decoding the window cost, from the reader's
 * own counters and from the kernel's (/proc/self/io). */
static void print_stats(struct fr_store_reader *reader, const struct fr_window *w)
{
	struct fr_store_reader_stats rs;
	unsigned long long rchar = 0, read_bytes = 0;
	char line[128], a[32], b[32];
	FILE *io = fopen("/proc/self/io", "re");

	if (io) {
		while (fgets(line, sizeof(line), io)) {
			sscanf(line, "rchar: %llu", &rchar);
			sscanf(line, "read_bytes: %llu", &read_bytes);
		}
		fclose(io);
	}
	fr_store_reader_get_stats(reader, &rs);
	fprintf(stderr, "frctl: read %s of a %s store (%.3f%%) for %zu chunks; process read %llu bytes "
		"(rchar), %llu from the block layer\n",
		fr_format_size(rs.bytes_read, a, sizeof(a)), fr_format_size(rs.bytes_on_disk, b, sizeof(b)),
		rs.bytes_on_disk ? 100.0 * (double)rs.bytes_read / (double)rs.bytes_on_disk : 0.0,
		w->nchunks, rchar, read_bytes);
}

int verb_dump(struct frctl *f, int argc, char **argv)
{
	struct fr_store_reader *reader = NULL;
	struct fr_window *w = NULL;
	struct fr_folded *folded = NULL;
	struct dump_opts o;
	_cleanup_free_ char *tmp = NULL;
	FILE *out = stdout;
	int k, ret = EXIT_FAILURE_;

	k = parse_args(f, argc, argv, &o);
	if (k != 0)
		return k > 0 ? EXIT_OK : EXIT_USAGE;
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	if (o.input || o.incident) {
		_cleanup_free_ char *path = NULL, *meta = NULL;
		if (o.incident && asprintf(&path, "%s/incidents/%s.fri", frctl_store_path(f), o.incident) < 0)
			return EXIT_FAILURE_;
		k = frctl_open_incident(o.input ? o.input : path, &reader, &meta);
		if (k < 0)
			return EXIT_FAILURE_;
	} else if (frctl_open_store(f, frctl_store_path(f), &reader) < 0)
		return EXIT_FAILURE_;
	struct fr_window_query q = { .since_ns = o.since, .until_ns = o.until };
	if (o.boot && (ret = select_boot(reader, o.boot, &q)) != 0)
		goto out;
	ret = EXIT_FAILURE_;
	k = fr_window_load(reader, &q, &w);
	if (k < 0) {
		frctl_error("cannot read store %s: %s", frctl_store_path(f), strerror(-k));
		goto out;
	}
	if (o.output && open_output(o.output, &tmp, &out) < 0)
		goto out;

	if (o.format == FMT_FOLDED && !(folded = fr_folded_new()))
		goto out;
	for (size_t i = 0; i < w->n; i++) {
		const struct fr_window_entry *e = &w->v[i];

		if (!matches(&o, e))
			continue;
		if (o.format == FMT_FOLDED) {
			if (e->r.type == FR_REC_SAMPLE && fr_folded_add(folded, w, e) == -ENOMEM) {
				frctl_error("out of memory");
				goto out;
			}
		} else if (o.format == FMT_JSON) {
			struct json_object *j = fr_window_entry_to_json(w, e);
			fputs(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), out);
			fputc('\n', out);
			json_object_put(j);
		} else
			fr_record_print_text(out, w, e);
	}
	if (folded)
		(void)fr_folded_print(folded, out);
	struct fr_store_reader_stats rs;
	fr_store_reader_get_stats(reader, &rs);
	if (rs.chunks_unsupported || rs.segments_unsupported)
		frctl_error("warning: %" PRIu64 " segments and %" PRIu64 " chunks were written in a newer format "
			    "than this frctl knows and were skipped", rs.segments_unsupported, rs.chunks_unsupported);
	if (w->chunks_damaged || w->records_bad)
		frctl_error("warning: %" PRIu64 " damaged chunks and %" PRIu64
			    " undecodable records in this window were skipped",
			    w->chunks_damaged, w->records_bad);
	if (fflush(out) != 0 || ferror(out)) {
		frctl_error("write error: %s", strerror(errno));
		goto out;
	}
	if (tmp) {
		if (fsync(fileno(out)) < 0 || rename(tmp, o.output) < 0) {
			frctl_error("cannot write %s: %s", o.output, strerror(errno));
			goto out;
		}
		free(tmp);
		tmp = NULL;
	}
	if (o.stats)
		print_stats(reader, w);
	ret = EXIT_OK;
out:
	if (out != stdout)
		fclose(out);
	if (tmp)
		unlink(tmp);
	fr_folded_free(folded);
	fr_window_free(w);
	fr_store_reader_free(reader);
	return ret;
}
