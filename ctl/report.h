/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl report: what one pass over the window gathers (report.c), printed
 * as text (report.c) or as a page (report-html.c).
 */
#ifndef FR_CTL_REPORT_H
#define FR_CTL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/window.h"
#include "call-paths.h"
#include "report-baseline.h"
#include "string-counts.h"
#include "wait-chain.h"
#include "window-args.h"

#define TOP 5
/* fr_window_frames() may return more than the record's addresses
 * (inlined functions, markers): it is told how many fit */
#define FRAMES_MAX FR_FRAMES_EXPANDED_MAX

/* The slowest entries of one kind, longest first. */
struct top {
	struct fr_window_entry e[TOP]; /* copies: the window decodes on demand */
	uint64_t v[TOP];
	unsigned n;
	uint64_t count;
};

struct extreme {
	bool seen;
	double v;
	uint64_t wall;
};

/* The first entries of a kind, and how many more there were. */
#define LIST_MAX (TOP * 2)
struct list {
	struct fr_window_entry v[LIST_MAX];
	unsigned n;
	uint64_t more;
};

struct report {
	struct top syscall, offcpu, runq, block;
	uint64_t samples, execs, exits, exits_failed, forks, records, gaps_lost, gap_records;
	uint64_t offcpu_ns, offcpu_bare, offcpu_bare_ns; /* the latencies; those without a stack */
	uint64_t offcpu_idle, offcpu_idle_ns;         /* waits idle by design (lib/wait-kind.h) */
	struct fr_counts self, procs, started;
	struct paths cpu_paths, offcpu_paths;
	struct fr_waits waits; /* every off-CPU wait, to follow wakers (wait-chain.h) */
	struct list killed, triggers, ooms, marks, signals;
	struct fr_window_entry causes[LIST_MAX]; /* of the triggers */
	bool has_cause[LIST_MAX];
	struct extreme load, mem, busy, psi_cpu, psi_mem, psi_io;
	uint64_t first, last;
};

/* Adds record @i of @w (decoded: @e) to @rp. */
void report_add(struct report *rp, struct fr_window *w, size_t i, const struct fr_window_entry *e);
void report_done(struct report *rp);

/* The page: @rp gathered from the window of @s, shown under @a's filters,
 * and what changed against @bl's baseline (@changes: what_changed());
 * written to @out.  0 or -errno (-ENOMEM; a write error is @out's). */
int report_html(struct report *rp, const struct frctl_source *s, const struct frctl_window_args *a,
		const struct baseline *bl, struct json_object *changes, FILE *out);

#endif
