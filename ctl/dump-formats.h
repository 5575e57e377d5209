/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The output formats of frctl dump, one table (issue 44): each format's
 * name, its --help lines, what kind of output it is, and for the formats
 * that make one document of the window's records (perfetto, folded,
 * pprof) the four functions dump calls: begin, wants, add, finish.  The
 * --format list, its error and its help, and the errors that name the
 * formats an option takes (--sizes, --offcpu, -f), are made from the
 * table; dump -f prints the formats of kind DUMP_LINES and refuses the
 * others with the reason the table gives.  A new document format is its output-NAME.c
 * and one entry here.
 */
#ifndef FRCTL_DUMP_FORMATS_H
#define FRCTL_DUMP_FORMATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct fr_record;
struct fr_window;
struct fr_window_entry;

enum dump_format_id { DUMP_TEXT, DUMP_JSON, DUMP_PERFETTO, DUMP_FOLDED, DUMP_BUNDLE, DUMP_PPROF, DUMP__MAX };

enum dump_format_kind {
	DUMP_LINES,   /* a line per record as the window is read; -f prints them too (dump.c, follow.c) */
	DUMP_RECORDS, /* one document of the window's records, written at its end (the functions below) */
	DUMP_WHOLE,   /* the window's chunks as a file (bundle.c) */
};

/* What a document format is made for. */
struct dump_format_ctx {
	FILE *out;
	struct fr_window *w; /* the window, as it streams */
	bool offcpu;         /* --offcpu: off-CPU stacks by blocked time, not samples */
	uint32_t hz;         /* the sampling rate the store was recorded at */
};

struct dump_format {
	const char *name;
	const char *help;         /* its --format lines, '\n' between them */
	enum dump_format_kind kind;
	bool need_exe;            /* its records name their process's executable */
	bool binary;              /* not for a terminal: needs -o there */
	bool offcpu;              /* takes --offcpu */
	bool sizes;               /* --sizes prints the window's bytes in it */
	const char *not_followed; /* kind != DUMP_LINES: why -f cannot print it (dump.c
				     adds the formats it can) */
	/* DUMP_RECORDS */
	void *(*begin)(const struct dump_format_ctx *c);
	bool (*wants)(void *state, const struct dump_format_ctx *c, const struct fr_record *r);
	int (*add)(void *state, const struct dump_format_ctx *c, const struct fr_window_entry *e);
	/* Writes the document to c->out when @write, and frees @state. */
	int (*finish)(void *state, const struct dump_format_ctx *c, bool write);
};

extern const struct dump_format dump_formats[DUMP__MAX];

/* The format named @name, or -1. */
int dump_format_id(const char *name);
/* "text, json, ...": the names, for errors. */
const char *dump_format_names(void);
/* "a or b", "a, b or c": the names of the formats @pick takes, in @buf,
 * for an error that says which a setting needs. */
const char *dump_format_names_if(bool (*pick)(const struct dump_format *f), char *buf, size_t len);
/* The --format part of dump's --help. */
const char *dump_formats_help(void);

#endif
