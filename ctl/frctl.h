/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What frctl's verbs share: global options and where things are. */
#ifndef FR_FRCTL_H
#define FR_FRCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "../lib/conf.h"
#include "../lib/record-fields.h"
#include "../lib/window.h"

struct frctl {
	const char *config_path;
	bool config_explicit;
	const char *store_arg;  /* --store */
	const char *socket_arg; /* --socket */
	struct fr_conf conf;
};

/* Exit codes (documented in frctl(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1,  /* runtime failure: store unreadable, I/O error */
	EXIT_USAGE = 2,     /* bad command line */
	EXIT_NOT_RUNNING = 3, /* status: the daemon is not running */
	EXIT_DENIED = 4,    /* freeze, mark: the daemon (or the control socket's
			       permissions) refused a caller that is neither
			       root nor in control.group */
};

/* Handles a global option inside a verb's option loop; returns true if it
 * was one. */
bool frctl_global_option(struct frctl *f, int opt, const char *arg);
#define FRCTL_GLOBAL_OPTIONS                                       \
	{ "config", required_argument, NULL, 'c' },                \
	{ "store", required_argument, NULL, 's' },                 \
	{ "socket", required_argument, NULL, 0x100 }

/* Option parsing of verbs that take only the global options, --help and,
 * when @json is not NULL, --json, when @input is not NULL, --input FILE,
 * and exactly @nargs arguments (left at argv[optind]).  Returns -1 to go
 * on, or the exit code to return. */
int frctl_parse_simple(struct frctl *f, int argc, char **argv, const char *verb, const char *help,
		       bool *json, const char **input, int nargs);

/* One request to the daemon over its control socket (loads the
 * configuration to find it).  Returns 0 with the reply in *resp.  On
 * failure prints one line naming @what and returns the exit code, except
 * with @down_ok, where a daemon that cannot be reached returns -errno and
 * prints nothing, and an "error" reply is returned as 0 for the caller. */
struct json_object;
int frctl_request(struct frctl *f, struct json_object *req, const char *what, bool down_ok,
		  struct json_object **resp);

/* Loads the configuration (once); prints the error and returns <0. */
int frctl_load_conf(struct frctl *f);
const char *frctl_store_path(struct frctl *f);
/* The socket the daemon of this store listens on. Caller frees. */
char *frctl_socket_path(struct frctl *f);

/* Opens the store, printing one clear line on failure. */
int frctl_open_store(struct frctl *f, const char *path, struct fr_store_reader **ret);
/* Opens an incident file, likewise; *ret_meta gets its metadata. */
int frctl_open_incident(const char *path, struct fr_store_reader **ret, char **ret_meta);

void frctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After getopt_long returned '?' or ':' (opterr is 0): one line naming the
 * bad option and where help is. Returns EXIT_USAGE. */
int frctl_bad_option(const char *verb, char **argv);

/* -o FILE (output-file.c): a temporary file beside @path (*ret_tmp, the
 * caller frees), renamed over it by frctl_output_commit() once complete;
 * on failure the caller unlinks it.  Both print one line and return
 * -errno on failure. */
int frctl_output_open(const char *path, char **ret_tmp, FILE **ret);
int frctl_output_commit(FILE *f, const char *tmp, const char *path);

int verb_dump(struct frctl *f, int argc, char **argv);
/* dump -f (follow.c): the window of @a, then the records as they are
 * stored, in text or JSON Lines, until SIGINT or SIGTERM (exit 0). */
struct frctl_window_args;
int frctl_dump_follow(struct frctl *f, const struct frctl_window_args *a, bool json, bool stacks);
int verb_report(struct frctl *f, int argc, char **argv);
int verb_status(struct frctl *f, int argc, char **argv);
int verb_boots(struct frctl *f, int argc, char **argv);
int verb_mark(struct frctl *f, int argc, char **argv);
int verb_freeze(struct frctl *f, int argc, char **argv);
int verb_incidents(struct frctl *f, int argc, char **argv);
/* upload.c: PUTs the incidents not uploaded yet to upload.url */
int verb_upload(struct frctl *f, int argc, char **argv);

/* Output formats of dump. */
struct fr_json_writer;
struct fr_out;
/* JSON: the record's line (lib/record-json.h), appended to @o; 0 or
 * -ENOMEM. */
int fr_window_entry_json(struct fr_json_writer *jw, struct fr_out *o, struct fr_window *w,
			 const struct fr_window_entry *e);
/* Text: one line per record.  Colour only where fr_text_colour() says:
 * on a terminal, and not with NO_COLOR set or TERM=dumb. */
enum {
	FR_TEXT_COLOUR = 1 << 0,
	FR_TEXT_NO_DATE = 1 << 1, /* the time of day only */
	FR_TEXT_STACKS = 1 << 2,  /* offcpu records' stacks on lines under them */
};
struct fr_text; /* the flags, and the last second formatted */
struct fr_out;
struct fr_text *fr_text_new(unsigned flags);
void fr_text_print(struct fr_text *t, struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e);
struct fr_text *fr_text_free(struct fr_text *t);
bool fr_text_colour(FILE *out);
/* --format folded: collapsed stacks ("comm;root;...;leaf count") of the
 * samples added, for flame graph tools. */
struct fr_folded;
struct fr_folded *fr_folded_new(void);
/* @weight: what the stack counts for (1 for a sample) */
int fr_folded_add(struct fr_folded *f, struct fr_window *w, const struct fr_window_entry *e, uint64_t weight);
/* Prints the stacks in byte order, once, after the last add; returns the
 * number of samples. */
uint64_t fr_folded_print(struct fr_folded *f, FILE *out);
/* Or the stacks themselves, in byte order ("comm;root;...;leaf" and
 * weight), once, after the last add (report's flame graphs). */
struct fr_count;
size_t fr_folded_stacks(struct fr_folded *f, const struct fr_count **ret);
struct fr_folded *fr_folded_free(struct fr_folded *f);
/* --format pprof (output-pprof.c): a gzipped pprof profile of the samples
 * (@offcpu: of the off-CPU stacks, by blocked time); @hz: the sampling
 * rate, for the CPU time a sample stands for. */
struct fr_pprof;
struct fr_pprof *fr_pprof_new(bool offcpu, uint32_t hz);
/* Whether the profile takes @r (samples; with offcpu, waits with a stack). */
bool fr_pprof_wants(const struct fr_pprof *p, const struct fr_record *r);
int fr_pprof_add(struct fr_pprof *p, struct fr_window *w, const struct fr_window_entry *e);
uint64_t fr_pprof_count(const struct fr_pprof *p);
int fr_pprof_write(struct fr_pprof *p, FILE *out);
struct fr_pprof *fr_pprof_free(struct fr_pprof *p);
/* --format perfetto: Trace Event Format JSON, streamed to @out. */
struct fr_perfetto;
struct fr_perfetto *fr_perfetto_begin(FILE *out, unsigned ncpu);
void fr_perfetto_add(struct fr_perfetto *p, struct fr_window *w, const struct fr_window_entry *e);
/* Writes the names and the trailer and frees @p. */
void fr_perfetto_end(struct fr_perfetto *p, const uint8_t *boot_id);

#endif
