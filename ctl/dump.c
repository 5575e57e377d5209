/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frctl dump: the records of a window, filtered, in time order. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "../lib/out-buf.h"
#include "../lib/parse.h"
#include "../lib/boots.h"
#include "../lib/record-json.h"
#include "../lib/store-reader.h"
#include "bundle.h"
#include "dump-formats.h"
#include "follow.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "output-file.h"
#include "output-json.h"
#include "output-text.h"
#include "store-sizes.h"
#include "window-args.h"

struct dump_opts {
	struct frctl_window_args win;
	int format; /* enum dump_format_id; -1: not given */
	const char *output;
	bool stats;
	bool sizes;  /* the window's bytes by type and stream instead of records */
	bool stacks; /* text: offcpu records' stacks under them */
	bool offcpu; /* folded, pprof: offcpu stacks by blocked time, not samples */
	bool follow; /* -f: then the records as they are stored (follow.c) */
};

static void help(void)
{
	printf("Usage: frctl dump [--last DUR | --since T [--until T]] [OPTIONS]\n"
	       "       frctl dump -f [--last DUR | --since T] [OPTIONS]\n"
	       "\n"
	       "Prints the recorded records of a time window, oldest first, merged across\n"
	       "CPUs. Reads the store directly: works with the daemon stopped.\n"
	       "\n"
	       "Following:\n"
	       "  -f, --follow        print the window (default: the last 10s), then the\n"
	       "                      records as they are stored, in time order, until\n"
	       "                      interrupted (like journalctl -f); text or json, from\n"
	       "                      the store; says on stderr when flightrecd stops or\n"
	       "                      restarts, and when records were lost to it\n"
	       "\n"
	       "%s"
	       "Output:\n"
	       "%s"
	       "  --stacks            text: print each off-CPU record's stack under it, leaf\n"
	       "                      first: where it slept, then where it entered the\n"
	       "                      kernel (JSON always has them)\n"
	       "  --offcpu            folded, pprof: the off-CPU records' stacks instead of\n"
	       "                      the samples, each counted by its blocked time\n"
	       "                      (folded: microseconds; pprof: nanoseconds)\n"
	       "  -o, --output FILE   write to FILE (created whole or not at all); without\n"
	       "                      --format, a bundle\n"
	       "  --stats             after the dump, print on stderr how much of the store\n"
	       "                      was read to find and decode the window\n"
	       "  --sizes             instead of the records, where the window's bytes on\n"
	       "                      disk go: by record type and by field stream (text,\n"
	       "                      or one JSON object with --format json)\n"
	       "\n"
	       "Exit status: 0 done, 1 the source could not be read or is damaged,\n"
	       "2 bad command line.\n",
	       frctl_window_help(), dump_formats_help());
}

/* What the formats are for: their names in errors come from the table. */
static bool takes_sizes(const struct dump_format *f)
{
	return f->sizes;
}
static bool followed(const struct dump_format *f)
{
	return f->kind == DUMP_LINES;
}
static bool takes_offcpu(const struct dump_format *f)
{
	return f->offcpu;
}

static int parse_args(struct frctl *f, int argc, char **argv, struct dump_opts *o)
{
	enum { O_FORMAT = O_WIN__END, O_STATS, O_STACKS, O_OFFCPU, O_SIZES };
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		FRCTL_WINDOW_OPTIONS,
		{ "format", required_argument, NULL, O_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "stats", no_argument, NULL, O_STATS },
		{ "sizes", no_argument, NULL, O_SIZES },
		{ "stacks", no_argument, NULL, O_STACKS },
		{ "offcpu", no_argument, NULL, O_OFFCPU },
		{ "follow", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char names[128];
	int c, k;

	*o = (struct dump_opts){ .format = -1 };
	frctl_window_args_init(&o->win);
	while ((c = getopt_long(argc, argv, "c:s:o:qfh", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		k = frctl_window_option(&o->win, c, optarg);
		if (k < 0)
			return k;
		if (k > 0)
			continue;
		switch (c) {
		case O_FORMAT:
			o->format = dump_format_id(optarg);
			if (o->format < 0) {
				frctl_error("--format: unknown format \"%s\" (%s)", optarg, dump_format_names());
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case O_STATS:
			o->stats = true;
			break;
		case O_SIZES:
			o->sizes = true;
			break;
		case O_STACKS:
			o->stacks = true;
			break;
		case O_OFFCPU:
			o->offcpu = true;
			break;
		case 'f':
			o->follow = true;
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
	if (o->sizes && (o->follow || o->output || o->stats || o->stacks || o->offcpu || o->win.redact ||
			 (o->format >= 0 && !takes_sizes(&dump_formats[o->format])))) {
		frctl_error("--sizes prints the window's bytes, not its records: it takes --format %s "
			    "and no --follow, -o, --stats, --stacks, --offcpu or --redact",
			    dump_format_names_if(takes_sizes, names, sizeof(names)));
		return -EINVAL;
	}
	if (o->follow) {
		if (o->format >= 0 && !followed(&dump_formats[o->format])) {
			frctl_error("%s; --follow prints lines: --format %s", dump_formats[o->format].not_followed,
				    dump_format_names_if(followed, names, sizeof(names)));
			return -EINVAL;
		}
		if (o->output) {
			frctl_error("--follow writes to standard output (redirect it); -o writes a file whole, at the end");
			return -EINVAL;
		}
		if (o->win.until || o->win.boot || o->win.input || o->win.incident || o->stats || o->win.redact) {
			frctl_error("--follow reads the store as it grows: it takes no %s",
				    o->win.until ? "--until" : o->win.boot ? "--boot" : o->win.input ? "--input" :
				    o->win.incident ? "--incident" : o->stats ? "--stats" : "--redact");
			return -EINVAL;
		}
		/* as journalctl -f shows the last lines first */
		if (!o->win.last && !o->win.since)
			o->win.last = "10s";
		o->win.follow = true;
	}
	if (o->format < 0)
		o->format = o->output ? DUMP_BUNDLE : DUMP_TEXT;
	if (o->stacks && o->format != DUMP_TEXT) {
		frctl_error("--stacks is for --format text (json always has the stacks)");
		return -EINVAL;
	}
	if (o->offcpu && !takes_offcpu(&dump_formats[o->format])) {
		frctl_error("--offcpu is for --format %s", dump_format_names_if(takes_offcpu, names, sizeof(names)));
		return -EINVAL;
	}
	if (dump_formats[o->format].binary && !o->output && isatty(STDOUT_FILENO)) {
		frctl_error("--format %s writes a binary file: give it with -o FILE", dump_formats[o->format].name);
		return -EINVAL;
	}
	o->win.need_exe = dump_formats[o->format].need_exe;
	/* every format but the bundle reads the window once, in order */
	o->win.stream = dump_formats[o->format].kind != DUMP_WHOLE;
	if (o->format == DUMP_BUNDLE && !o->output) {
		frctl_error("a bundle is a file: give it with -o FILE");
		return -EINVAL;
	}
	if (o->format == DUMP_BUNDLE && frctl_window_filtered(&o->win)) {
		frctl_error("--pid, --comm, --cgroup and --type filter what is printed; a bundle holds the whole "
			    "window (filter when reading it, or give --format)");
		return -EINVAL;
	}
	return frctl_window_finish(&o->win);
}

/* Text and JSON lines depend each on its record alone.  Text lines are
 * written by the threads that load the window, each chunk's as it is
 * decoded (text_line()), and written out from there in time order
 * (text_print()).  JSON lines need each process's executable, known only
 * in time order: a slice's records are formatted on every CPU at once, a
 * block each (in memory), and written in order. */
#define LINES_BLOCK_MAX 65536

struct lines_job {
	struct fr_window *w;
	const struct dump_opts *o;
	size_t from, to;
	struct fr_text *text;
	struct fr_json_writer *json;
	struct fr_out out; /* in memory */
};

struct lines {
	FILE *out;
	unsigned n;
	/* text: one per loading thread (fr_window_query.line's slot) */
	struct lines_job jobs[FR_WINDOW_THREADS_MAX + 1];
};

/* Text, in a loading thread: the line of one record, if it is shown. */
static void text_line(struct fr_window *w, const struct fr_window_item *it, const struct fr_window_entry *e,
		      unsigned slot, struct fr_out *o, void *userdata)
{
	struct lines *l = userdata;
	const struct frctl_window_args *a = &l->jobs[0].o->win;

	if (frctl_window_item_shown(a, it) && frctl_window_entry_shown(a, e))
		fr_text_print(l->jobs[slot].text, o, w, e);
}

/* Writes all of iov[0..n) (a pipe may take less at once). */
static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* a non-blocking stdout */
				(void)poll(&(struct pollfd){ .fd = fd, .events = POLLOUT }, 1, -1);
				continue;
			}
			return -errno;
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Text: the slice's lines, as text_line() wrote them, in time order,
 * straight from where they were written (consecutive lines of a chunk
 * in one piece). */
static int text_print(struct lines *l, const struct fr_window *w)
{
	struct iovec iov[1024];
	int n = 0, k = fflush(l->out) == 0 ? 0 : -errno, fd = fileno(l->out);

	for (size_t i = 0; i < w->n && k == 0; i++) {
		size_t len;
		const char *p = fr_window_line(w, i, &len);
		if (!len)
			continue;
		if (n && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
			iov[n - 1].iov_len += len;
			continue;
		}
		if (n == (int)ELEMENTSOF(iov)) {
			k = write_all(fd, iov, n);
			n = 0;
		}
		iov[n++] = (struct iovec){ (void *)p, len };
	}
	if (k == 0)
		k = write_all(fd, iov, n);
	return k;
}

static void *format_lines(void *userdata)
{
	struct lines_job *j = userdata;

	for (size_t i = j->from; i < j->to; i++) {
		struct fr_window_entry e;

		if (!frctl_window_entry(&j->o->win, j->w, i, &e))
			continue;
		if (j->json) {
			if (fr_window_entry_json(j->json, &j->out, j->w, &e) < 0 && !j->out.err)
				j->out.err = ENOMEM;
		} else
			fr_text_print(j->text, &j->out, j->w, &e);
	}
	return NULL;
}

static void lines_free(struct lines *l)
{
	if (!l)
		return;
	for (unsigned t = 0; t < l->n; t++) {
		fr_text_free(l->jobs[t].text);
		fr_json_writer_free(l->jobs[t].json);
		free(l->jobs[t].out.p);
	}
	free(l);
}

static struct lines *lines_new(FILE *out, const struct dump_opts *o)
{
	unsigned flags = (fr_text_colour(out) ? FR_TEXT_COLOUR : 0) | (o->stacks ? FR_TEXT_STACKS : 0);
	struct lines *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->out = out;
	l->n = fr_window_threads() + (o->format == DUMP_TEXT);
	for (unsigned t = 0; t < l->n; t++) {
		l->jobs[t] = (struct lines_job){ .o = o };
		if (o->format == DUMP_JSON ? fr_json_writer_new(&l->jobs[t].json) < 0
					  : !(l->jobs[t].text = fr_text_new(flags))) {
			lines_free(l);
			return NULL;
		}
		if (o->format != DUMP_TEXT && fr_out_init(&l->jobs[t].out, NULL) < 0) {
			lines_free(l);
			return NULL;
		}
	}
	return l;
}

/* Prints the lines of w->items[0..n); returns 0 or -errno (out of memory,
 * or a write error). */
static int lines_print(struct lines *l, struct fr_window *w)
{
	pthread_t threads[FR_WINDOW_THREADS_MAX];
	size_t block = MIN((w->n + l->n - 1) / l->n, (size_t)LINES_BLOCK_MAX);
	int k = 0;

	for (size_t start = 0; start < w->n && k == 0; start += (size_t)l->n * block) {
		bool started[FR_WINDOW_THREADS_MAX] = {};

		for (unsigned t = 0; t < l->n; t++) {
			struct lines_job *j = &l->jobs[t];
			j->w = w;
			j->from = MIN(start + (size_t)t * block, w->n);
			j->to = MIN(j->from + block, w->n);
			if (t && j->from < j->to)
				started[t] = pthread_create(&threads[t], NULL, format_lines, j) == 0;
		}
		for (unsigned t = 0; t < l->n; t++)
			if (!started[t])
				format_lines(&l->jobs[t]);
		for (unsigned t = 0; t < l->n; t++) {
			struct lines_job *j = &l->jobs[t];
			if (started[t])
				pthread_join(threads[t], NULL);
			if (j->out.err && !k)
				k = -j->out.err;
			if (!k && j->out.len && fwrite(j->out.p, 1, j->out.len, l->out) != j->out.len)
				k = -(errno ? errno : EIO);
			j->out.len = 0;
		}
	}
	return k;
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
	fprintf(stderr, "frctl: read %s of a %s store (%.3f%%) for %zu chunks; %" PRIu64 " of %" PRIu64
		" segments skipped unread; process read %llu bytes (rchar), %llu from the block layer\n",
		fr_format_size(rs.bytes_read, a, sizeof(a)), fr_format_size(rs.bytes_on_disk, b, sizeof(b)),
		rs.bytes_on_disk ? 100.0 * (double)rs.bytes_read / (double)rs.bytes_on_disk : 0.0,
		w->nchunks, rs.segments_skipped, rs.segments, rchar, read_bytes);
}

int verb_dump(struct frctl *f, int argc, char **argv)
{
	struct frctl_source src = {};
	const struct dump_format *fmt;
	struct dump_format_ctx ctx = {};
	void *doc = NULL; /* a DUMP_RECORDS format's state */
	struct lines *lines = NULL;
	struct dump_opts o;
	_cleanup_free_ char *tmp = NULL;
	FILE *out = stdout;
	int k, ret = EXIT_FAILURE_;

	k = parse_args(f, argc, argv, &o);
	if (k != 0)
		return k > 0 ? EXIT_OK : EXIT_USAGE;
	if (o.follow)
		return frctl_dump_follow(f, &o.win, o.format == DUMP_JSON, o.stacks);
	if (o.sizes) {
		/* opened as for following: the source and its window's times, no records loaded */
		o.win.follow = true;
		ret = frctl_source_open(f, &o.win, &src);
		if (ret == 0)
			ret = frctl_store_sizes(src.reader, &src.q, f->conf.zstd_level, o.format == DUMP_JSON, stdout) < 0 ?
				      EXIT_FAILURE_ :
				      EXIT_OK;
		goto out;
	}
	fmt = &dump_formats[o.format];
	if (fmt->kind != DUMP_WHOLE) {
		/* the output first: text lines are written as the window loads */
		if (o.output && frctl_output_open(o.output, &tmp, &out) < 0)
			goto out;
		if (fmt->kind == DUMP_LINES && !(lines = lines_new(out, &o))) {
			frctl_error("out of memory");
			goto out;
		}
		if (o.format == DUMP_TEXT) {
			o.win.line = text_line;
			o.win.line_userdata = lines;
			o.win.lines_only = true; /* text_print() reads only the lines */
		}
	}
	ret = frctl_source_open(f, &o.win, &src);
	if (ret != 0)
		goto out;
	ret = EXIT_FAILURE_;
	if (fmt->kind == DUMP_WHOLE) {
		/* a damaged source makes a bundle that says so: refuse */
		ret = frctl_source_check(&src);
		if (ret == 0)
			ret = fr_bundle_write(&src, o.output);
		if (ret == 0 && o.stats)
			print_stats(src.reader, src.w);
		goto out;
	}
	ctx = (struct dump_format_ctx){ .out = out, .w = src.w, .offcpu = o.offcpu, .hz = f->conf.sample_hz };
	if (fmt->kind == DUMP_RECORDS && !(doc = fmt->begin(&ctx))) {
		frctl_error("out of memory");
		goto out;
	}
	while ((k = fr_window_stream_next(src.w)) > 0) {
		if (lines && (k = o.format == DUMP_TEXT ? text_print(lines, src.w) : lines_print(lines, src.w)) < 0) {
			frctl_error("%s: %s", k == -ENOMEM ? "out of memory" : "write error", strerror(-k));
			goto out;
		}
		for (size_t i = 0; doc && i < src.w->n; i++) {
			struct fr_window_entry e;

			if (!frctl_window_entry(&o.win, src.w, i, &e) || !fmt->wants(doc, &ctx, &e.r))
				continue;
			if ((k = fmt->add(doc, &ctx, &e)) < 0) {
				frctl_error("%s", k == -ENOMEM ? "out of memory" : strerror(-k));
				goto out;
			}
		}
	}
	frctl_source_progress_end(&src);
	if (k < 0) {
		frctl_error("cannot read %s: %s", src.name, strerror(-k));
		goto out;
	}
	if (doc) {
		k = fmt->finish(TAKE_PTR(doc), &ctx, true);
		if (k < 0) {
			frctl_error("cannot write --format %s: %s", fmt->name, strerror(-k));
			goto out;
		}
	}
	if (fflush(out) != 0 || ferror(out)) {
		frctl_error("write error: %s", strerror(errno));
		goto out;
	}
	ret = frctl_source_check(&src);
	if (ret != 0)
		goto out; /* -o: nothing half-written */
	ret = EXIT_FAILURE_;
	if (tmp) {
		if (frctl_output_commit(out, tmp, o.output) < 0)
			goto out;
		free(tmp);
		tmp = NULL;
	}
	if (o.stats)
		print_stats(src.reader, src.w);
	ret = EXIT_OK;
out:
	if (doc)
		(void)fmt->finish(doc, &ctx, false);
	if (out != stdout)
		fclose(out);
	if (tmp)
		unlink(tmp);
	lines_free(lines);
	frctl_source_done(&src);
	return ret;
}
