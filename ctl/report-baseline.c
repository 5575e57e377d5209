/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/clock.h"
#include "../lib/parse.h"
#include "frctl-error.h"
#include "frctl.h"
#include "report-baseline.h"

int baseline_option(struct baseline *b, int opt, const char *arg)
{
	switch (opt) {
	case O_BASE_SINCE: b->since = arg; return 1;
	case O_BASE_UNTIL: b->until = arg; return 1;
	case O_BASE_INCIDENT: b->incident = arg; return 1;
	case O_BASE_NONE: b->none = true; return 1;
	default: return 0;
	}
}

/* The first and last records' times of @w. */
static void span_of(const struct fr_window *w, uint64_t *first, uint64_t *last)
{
	*first = *last = 0;
	for (size_t i = 0; i < w->n; i++)
		if (!w->items[i].hidden) {
			if (!*first)
				*first = w->items[i].wall_ns;
			*last = w->items[i].wall_ns;
		}
}

/* A time of an incident's metadata (RFC 3339); false when absent. */
static bool meta_time(struct json_object *meta, const char *key, uint64_t *ns)
{
	const char *v = frctl_meta_string(meta, key);

	return v && fr_parse_time(v, 0, ns) == 0 && *ns;
}

/* The incident's own minutes before its first trigger (or the first half
 * of a file without one). */
static void split(struct baseline *b, const struct frctl_source *s, uint64_t first, uint64_t last)
{
	uint64_t at = first + (last - first) / 2, trig = 0;

	if (!meta_time(s->meta, "trigger_time", &trig))
		for (size_t i = 0; i < s->w->n; i++)
			if (!s->w->items[i].hidden && s->w->items[i].type == FR_REC_TRIGGER) {
				trig = s->w->items[i].wall_ns;
				break;
			}
	if (trig)
		at = trig > first + BASELINE_LEAD_NS ? trig - BASELINE_LEAD_NS : first;
	/* the file's records from before its window are the baseline too (a
	 * file whose first record comes after the split has none before it) */
	uint64_t file_first, file_last;
	span_of(s->w, &file_first, &file_last);
	b->split = true;
	b->split_ns = at;
	b->base.since = file_first && file_first < at ? file_first : at;
	b->base.until = at;
	b->now.since = at;
	b->now.until = last;
}

/* The arguments the baseline is read with: the window's filters, its own
 * source and span. */
static void args_from(struct frctl_window_args *ba, const struct frctl_window_args *a)
{
	frctl_window_args_init(ba);
	ba->pid = a->pid;
	ba->comm = a->comm;
	ba->type = a->type;
	ba->cgroup = a->cgroup;
	ba->quiet = a->quiet;
	ba->debug_dir = a->debug_dir;
	ba->no_debuginfod = a->no_debuginfod;
	ba->redact = a->redact;
	ba->need_exe = a->need_exe;
}

int baseline_open(struct frctl *f, struct baseline *b, const struct frctl_window_args *a, struct frctl_source *s)
{
	uint64_t first, last, now = fr_now_ns(CLOCK_REALTIME);
	int k;

	if (b->none)
		return 0;
	if ((b->since || b->until) && b->incident) {
		frctl_error("--baseline-incident cannot be combined with --baseline-since/--baseline-until");
		return EXIT_USAGE;
	}
	if (b->since && fr_parse_time(b->since, now, &b->a.since_ns) < 0) {
		frctl_error("--baseline-since: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", b->since);
		return EXIT_USAGE;
	}
	if (b->until && fr_parse_time(b->until, now, &b->a.until_ns) < 0) {
		frctl_error("--baseline-until: invalid time \"%s\" (RFC 3339, 'YYYY-MM-DD HH:MM[:SS]' or -DUR)", b->until);
		return EXIT_USAGE;
	}
	span_of(s->w, &first, &last);
	if (a->window_given) {
		first = a->since_ns;
		last = a->until_ns ? a->until_ns : last;
	} else if (meta_time(s->meta, "start", &first) && meta_time(s->meta, "end", &last)) {
		/* an incident: its window, not the whole chunks it keeps */
		b->clip = true;
	}
	if (side_init(&b->now, first, last, b->stacks) < 0 || side_init(&b->base, 0, 0, b->stacks) < 0) {
		frctl_error("out of memory");
		return EXIT_FAILURE_;
	}
	b->active = true;
	if (b->since || b->until || b->incident) {
		uint64_t since = b->a.since_ns, until = b->a.until_ns;
		args_from(&b->a, a);
		b->a.incident = b->incident;
		if (b->since || b->until) {
			b->a.since_ns = since;
			b->a.until_ns = until ? until : now;
			b->a.window_given = true;
			if (b->a.since_ns > b->a.until_ns) {
				frctl_error("--baseline-since is after --baseline-until");
				return EXIT_USAGE;
			}
		}
	} else if (s->is_file && !a->incident) {
		split(b, s, first, last); /* a file alone: nothing before it */
		return 0;
	} else {
		uint64_t len = last > first ? last - first : 60 * NSEC_PER_SEC;
		args_from(&b->a, a);
		b->a.since_ns = first > len ? first - len : 0;
		b->a.until_ns = first;
		b->a.window_given = true;
	}
	b->a.quiet = true;
	k = frctl_source_open(f, &b->a, &b->s);
	b->opened = true;
	if (k != 0)
		return k;
	if (b->incident) {
		/* its window, not the chunks from before it that it keeps */
		b->base_clip = meta_time(b->s.meta, "start", &b->base.since) && meta_time(b->s.meta, "end", &b->base.until);
		if (!b->base_clip)
			span_of(b->s.w, &b->base.since, &b->base.until);
		return 0;
	}
	b->base.since = b->a.since_ns;
	b->base.until = b->a.until_ns;
	/* an incident whose minutes before are gone from the store */
	if (a->incident && !b->since && !b->until) {
		uint64_t x, y;
		span_of(b->s.w, &x, &y);
		if (!x) {
			frctl_source_done(&b->s);
			b->opened = false;
			split(b, s, first, last);
		}
	}
	return 0;
}

void baseline_add_window(struct baseline *b, struct fr_window *w, size_t i, const struct fr_window_entry *e)
{
	if (!b->active)
		return;
	if (b->split && e->wall_ns < b->split_ns)
		side_add(&b->base, w, i, e);
	else if (!b->clip || (e->wall_ns >= b->now.since && e->wall_ns <= b->now.until))
		side_add(&b->now, w, i, e);
}

void baseline_add_own(struct baseline *b)
{
	if (!b->opened)
		return;
	for (size_t i = 0; i < b->s.w->n; i++) {
		struct fr_window_entry e;
		if (frctl_window_entry(&b->a, b->s.w, i, &e) &&
		    (!b->base_clip || (e.wall_ns >= b->base.since && e.wall_ns <= b->base.until)))
			side_add(&b->base, b->s.w, i, &e);
	}
}

void baseline_done(struct baseline *b)
{
	if (b->opened)
		frctl_source_done(&b->s);
	if (b->active) {
		side_done(&b->now);
		side_done(&b->base);
	}
}
