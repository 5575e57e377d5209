/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What dump and report read: a source (the store, an incident of it, or an
 * incident or bundle file), a time window, a boot, and record filters;
 * their options, their checks, and the loading of the window.  Opening
 * a store or an incident file with one clear line on failure is here
 * too, for the verbs that read a source without a window (boots).
 */
#ifndef FR_CTL_WINDOW_ARGS_H
#define FR_CTL_WINDOW_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/window.h"
#include "frctl.h"

struct json_object;
struct fr_redactor;

enum {
	O_WIN_LAST = 0x200,
	O_WIN_SINCE,
	O_WIN_UNTIL,
	O_WIN_BOOT,
	O_WIN_INPUT,
	O_WIN_INCIDENT,
	O_WIN_PID,
	O_WIN_COMM,
	O_WIN_TYPE,
	O_WIN_CGROUP,
	O_WIN_QUIET,
	O_WIN_DEBUG_DIR,
	O_WIN_NO_DEBUGINFOD,
	O_WIN_REDACT,
	O_WIN__END, /* verbs number their own options from here */
};

#define FRCTL_WINDOW_OPTIONS                                        \
	{ "last", required_argument, NULL, O_WIN_LAST },            \
	{ "since", required_argument, NULL, O_WIN_SINCE },          \
	{ "until", required_argument, NULL, O_WIN_UNTIL },          \
	{ "boot", required_argument, NULL, O_WIN_BOOT },            \
	{ "input", required_argument, NULL, O_WIN_INPUT },          \
	{ "incident", required_argument, NULL, O_WIN_INCIDENT },    \
	{ "pid", required_argument, NULL, O_WIN_PID },              \
	{ "comm", required_argument, NULL, O_WIN_COMM },            \
	{ "type", required_argument, NULL, O_WIN_TYPE },            \
	{ "cgroup", required_argument, NULL, O_WIN_CGROUP },        \
	{ "quiet", no_argument, NULL, O_WIN_QUIET },                \
	{ "debug-dir", required_argument, NULL, O_WIN_DEBUG_DIR },  \
	{ "no-debuginfod", no_argument, NULL, O_WIN_NO_DEBUGINFOD }, \
	{ "redact", optional_argument, NULL, O_WIN_REDACT }
/* and 'q' in the verb's short options */

/* The help text of these options, for a verb's --help. */
const char *frctl_window_help(void);

/* The names of the record types a person selects (lib/record-types.h),
 * @sep between them and @last_sep before the last; a static buffer. */
const char *frctl_record_types_list(const char *sep, const char *last_sep);

struct frctl_window_args {
	const char *last, *since, *until; /* as given; parsed by finish */
	const char *boot;
	const char *input;    /* an incident or bundle file */
	const char *incident; /* an incident id in the store */
	long pid;             /* -1: any */
	const char *comm;
	int type;             /* -1: any */
	const char *cgroup;   /* a cgroup path: it and below */
	bool quiet;           /* no progress on stderr */
	const char *debug_dir; /* for frames not named at capture; NULL: the default */
	bool no_debuginfod;   /* nor from the servers of DEBUGINFOD_URLS */
	const char *redact;   /* --redact[=LIST]: "" the configured classes;
				 NULL: not given */
	bool need_exe;        /* the verb prints executables (entries' exe) */
	bool stream;          /* the verb reads the window once, in order:
				 fr_window_stream_next() gives it in slices */
	/* streamed, optional: lines written as the window loads (see
	 * fr_window_query.line) */
	void (*line)(struct fr_window *w, const struct fr_window_item *it, const struct fr_window_entry *e,
		     unsigned slot, struct fr_out *o, void *userdata);
	void *line_userdata;
	bool lines_only; /* fr_window_query.lines_only */
	bool follow;     /* dump -f: the source is opened, no window loaded
			    (follow.c reads the store as it grows) */
	/* set by finish */
	uint64_t since_ns, until_ns;
	bool window_given;
};

void frctl_window_args_init(struct frctl_window_args *a);
/* In a verb's getopt loop: 1 if @opt was one of these (taken), 0 if not,
 * -EINVAL on a bad value (one line printed). */
int frctl_window_option(struct frctl_window_args *a, int opt, const char *arg);
/* After the loop: parses and checks the window; -EINVAL (line printed). */
int frctl_window_finish(struct frctl_window_args *a);
bool frctl_window_filtered(const struct frctl_window_args *a);
/* Is record @i of @w shown?  If so, decodes it into @e.  Context entries
 * never are; gaps are shown under every filter but --type. */
bool frctl_window_entry(const struct frctl_window_args *a, const struct fr_window *w, size_t i,
			struct fr_window_entry *e);
/* Its two halves: what the item tells before decoding, then the entry. */
bool frctl_window_item_shown(const struct frctl_window_args *a, const struct fr_window_item *it);
bool frctl_window_entry_shown(const struct frctl_window_args *a, const struct fr_window_entry *e);

/* An opened source and its loaded window. */
struct frctl_source {
	struct fr_store_reader *reader;
	struct fr_window *w;
	struct fr_window_query q;
	struct json_object *meta; /* of an incident or bundle file, else NULL
				     (redacted with --redact) */
	struct json_object *hosts; /* boot id -> the host that recorded it
				      (source-host.h) */
	const char *name;         /* for messages: store path or file */
	bool is_file;             /* an incident or bundle file */
	uint64_t progress_start;  /* progress line: when loading began */
	bool progress_shown;
	struct fr_late_names *late_names; /* the window's */
	unsigned debuginfod_timeout_s;
	/* --redact: what was cut, and the window is read from a copy of
	 * the source without it (redact-source.c); NULL: not redacted */
	struct fr_redactor *redactor;
	uint64_t redact_lost; /* chunks of the source left out of the copy:
				 damaged, or overwritten since selected */
};

/* Opens the store, printing one clear line on failure. */
int frctl_open_store(struct frctl *f, const char *path, struct fr_store_reader **ret);
/* Opens an incident file, likewise; *ret_meta gets its metadata. */
int frctl_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta);
/* A string member of an incident's or bundle's metadata, or NULL when it
 * is missing or not a string: the file's JSON is not trusted to be ours. */
const char *frctl_meta_string(struct json_object *meta, const char *key);

/* Opens the source, resolves --boot, loads the window (progress on a
 * terminal unless --quiet; with a->stream, only opens it: the slices load
 * as they are asked for; with a->follow, neither: s->w stays NULL).
 * Returns 0 or an exit code (line printed). */
int frctl_source_open(struct frctl *f, const struct frctl_window_args *a, struct frctl_source *s);
/* Removes the progress line, if one was shown. */
void frctl_source_progress_end(struct frctl_source *s);
/* Warnings about what could not be read; an exit code (EXIT_FAILURE_ when
 * an incident or bundle file is damaged), or 0. */
int frctl_source_check(const struct frctl_source *s);
void frctl_source_done(struct frctl_source *s);

#endif
