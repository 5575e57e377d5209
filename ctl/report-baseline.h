/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl report's baseline: what its window is compared with (what-changed.h).
 * By default the same length just before the window, from the store; for
 * an incident, the store's minutes before it, or, when the store no longer
 * has them (or the incident is read from a file alone), the incident's own
 * part before BASELINE_LEAD of its first trigger.  --baseline-since/-until
 * choose a span of the store, --baseline-incident another incident,
 * --no-baseline none.
 */
#ifndef FR_CTL_REPORT_BASELINE_H
#define FR_CTL_REPORT_BASELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "what-changed.h"
#include "window-args.h"

/* An incident read alone: what is compared is from this long before its
 * first trigger to its end. */
#define BASELINE_LEAD_NS (10ULL * 1000000000ULL)

enum {
	O_BASE_SINCE = O_WIN__END + 0x40,
	O_BASE_UNTIL,
	O_BASE_INCIDENT,
	O_BASE_NONE,
};

#define REPORT_BASELINE_OPTIONS                                       \
	{ "baseline-since", required_argument, NULL, O_BASE_SINCE },       \
	{ "baseline-until", required_argument, NULL, O_BASE_UNTIL },       \
	{ "baseline-incident", required_argument, NULL, O_BASE_INCIDENT }, \
	{ "no-baseline", no_argument, NULL, O_BASE_NONE }

struct baseline {
	const char *since, *until, *incident; /* as given */
	bool none;
	bool stacks;              /* keep the sides' CPU stacks (the page) */
	/* set by baseline_open() */
	bool split;               /* the window's records before split_ns are the baseline */
	bool clip;                /* compare only the window's records in [now.since, now.until] */
	bool base_clip;           /* --baseline-incident: only its window's records, [base.since, base.until] */
	uint64_t split_ns;
	struct frctl_window_args a; /* else: its own source, read with these */
	struct frctl_source s;
	bool opened;
	struct side now, base;
	bool active;
};

/* In the verb's getopt loop: 1 if taken, 0 if not ours, -EINVAL (line printed). */
int baseline_option(struct baseline *b, int opt, const char *arg);

/* After the window @s is loaded with @a: chooses the baseline, and loads
 * it unless it is part of the window.  0 or an exit code (line printed). */
int baseline_open(struct frctl *f, struct baseline *b, const struct frctl_window_args *a, struct frctl_source *s);

/* Adds an entry of the window (to the window's side, or the baseline's
 * when split), then, once the window is done, the baseline's own. */
void baseline_add_window(struct baseline *b, struct fr_window *w, size_t i, const struct fr_window_entry *e);
void baseline_add_own(struct baseline *b);

void baseline_done(struct baseline *b);

#endif
