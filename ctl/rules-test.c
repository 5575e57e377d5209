/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl rules test: the configuration's trigger rules tried on the stored
 * past.  The records of the window, in time order, go through the same
 * matching (fr_rule_matches(), lib/rules.h) and governance
 * (fr_governance_fire(), lib/governance.h) the daemon runs live; what
 * would have fired, joined an incident or been suppressed is printed, and
 * the incidents that would have been written.  A record counts when the
 * daemon would have learned of it, when it completed (a wait's end: its
 * time stamp is its start), and on that clock (the daemon's reads some
 * milliseconds later, when its ring is drained); records are taken in
 * the order of their time stamps (the daemon's, of their completion).  Rules of no record cannot be tried: pressure
 * (PSI is read live, not stored) and manual (it fires on frctl freeze).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/governance.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/out-buf.h"
#include "../lib/record-fields.h"
#include "../lib/record-json.h"
#include "../lib/rules.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "output-json.h"
#include "output-text.h"
#include "paths.h"
#include "window-args.h"

/* Incidents open at once, as the daemon's engine allows (trigger.c). */
#define OPEN_MAX 16
/* Incidents and outcomes listed at most: past these they are counted. */
#define LISTED_MAX 10000

struct incident {
	struct fr_span span;
	size_t rule;
	unsigned joined;
	struct json_object *trigger; /* the record, as dump --format json */
};

struct tried {
	struct fr_governance gov;
	const struct fr_rules *rules;
	bool *selected;
	struct incident *inc;
	size_t ninc, capinc;
	size_t open[OPEN_MAX]; /* indexes into inc */
	unsigned nopen;
	struct json_object *events; /* --json: every outcome, in time order */
	uint64_t unlisted;
	struct fr_text *text;
	struct fr_json_writer *jw;
	bool json;
};

static const char *outcome_name(enum fr_fire f)
{
	switch (f) {
	case FR_FIRE_OPENED: return "fired";
	case FR_FIRE_JOINED: return "joined";
	case FR_FIRE_SUPPRESSED_COOLDOWN: return "suppressed: cooldown";
	case FR_FIRE_SUPPRESSED_BUDGET: return "suppressed: max_per_hour";
	}
	return "?";
}

/* The record as dump --format json prints it. */
static struct json_object *record_json(struct tried *t, struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_out o;
	struct json_object *j = NULL;

	if (fr_out_init(&o, NULL) < 0)
		return NULL;
	if (fr_window_entry_json(t->jw, &o, w, e) == 0) {
		fr_out_putc(&o, 0);
		if (!o.err)
			j = json_tokener_parse(o.p);
	}
	(void)fr_out_end(&o);
	return j;
}

/* Rule @ri fired on @e: the governance's outcome, and the incident. */
static int fire(struct tried *t, struct fr_window *w, size_t ri, const struct fr_window_entry *e)
{
	const struct fr_rule *r = &t->rules->v[ri];
	struct fr_span *open[OPEN_MAX], span;
	unsigned which = 0;
	bool extended = false;
	enum fr_fire f;
	char at[64], a[64], b[64];
	size_t n;

	/* the daemon learns of a record when it is complete: a wait's when
	 * it ends (its time stamp is when it began); then the incidents
	 * written already are closed, and its governance clock reads that */
	uint64_t d = fr_record_duration_ns(&e->r), known = e->wall_ns + d;

	for (unsigned i = 0; i < t->nopen;)
		if (t->inc[t->open[i]].span.end + FR_INCIDENT_SETTLE_NS < known)
			t->open[i] = t->open[--t->nopen];
		else
			i++;
	for (unsigned i = 0; i < t->nopen; i++)
		open[i] = &t->inc[t->open[i]].span;
	f = fr_governance_fire(&t->gov, ri, r, e->wall_ns, e->r.ts + d, open, t->nopen, OPEN_MAX, &which, &extended,
			       &span);
	if (f == FR_FIRE_OPENED) {
		if (t->ninc == t->capinc) {
			size_t c = MAX(t->capinc * 2, (size_t)16);
			struct incident *v = realloc(t->inc, c * sizeof(*v));
			if (!v)
				return -ENOMEM;
			t->inc = v;
			t->capinc = c;
		}
		t->inc[t->ninc] = (struct incident){ .span = span, .rule = ri, .trigger = record_json(t, w, e) };
		t->open[t->nopen++] = t->ninc++;
	} else if (f == FR_FIRE_JOINED)
		t->inc[t->open[which]].joined++;
	n = f == FR_FIRE_OPENED ? t->ninc : f == FR_FIRE_JOINED ? t->open[which] + 1 : 0;
	if (t->json) {
		struct json_object *o = json_object_new_object();
		if (json_object_array_length(t->events) >= LISTED_MAX) {
			t->unlisted++;
			json_object_put(o);
			return 0;
		}
		json_object_object_add(o, "time", json_object_new_string(fr_format_rfc3339(e->wall_ns, at, sizeof(at))));
		json_object_object_add(o, "rule", json_object_new_string(r->name));
		json_object_object_add(o, "outcome", json_object_new_string(outcome_name(f)));
		json_object_object_add(o, "incident", n ? json_object_new_int64((int64_t)n) : NULL);
		json_object_array_add(t->events, o);
		return 0;
	}
	fr_format_rfc3339(e->wall_ns, at, sizeof(at));
	printf("%s  %-16s %-24s", at, r->name, outcome_name(f));
	if (f == FR_FIRE_OPENED)
		printf(" incident %zu: %s to %s\n    on: ", n, fr_format_rfc3339(span.start, a, sizeof(a)),
		       fr_format_rfc3339(span.end, b, sizeof(b)));
	else if (f == FR_FIRE_JOINED)
		printf(" incident %zu%s\n    on: ", n, extended ? " (its window extended)" : "");
	else
		printf("\n    on: ");
	{
		struct fr_out o;
		if (fr_out_init(&o, stdout) == 0) {
			fr_text_print(t->text, &o, w, e);
			(void)fr_out_end(&o);
		}
	}
	return 0;
}

static void help(void)
{
	printf("Usage: frctl rules test [--config FILE] [--rule NAME] [--last DUR | --since T [--until T]] [--json]\n"
	       "\n"
	       "Tries the trigger rules of the configuration on the records the store\n"
	       "holds, with the daemon's own matching and governance (cooldown,\n"
	       "max_per_hour, joining an open incident): when each rule would have\n"
	       "fired, joined or been suppressed, and the incidents it would have\n"
	       "written.  Rules on pressure (read live) and the manual rule cannot\n"
	       "be tried; a rule only sees the records the store kept (over the\n"
	       "thresholds the sources had then).\n"
	       "\n"
	       "  -c, --config FILE    the rules to try (default: the daemon's);\n"
	       "                       a bad file is one line, FILE:LINE, exit 2\n"
	       "      --rule NAME      only this rule (repeatable)\n"
	       "      --last DUR, --since T, --until T\n"
	       "                       the past to try them on (default: all of it)\n"
	       "      --json           one object: rules (their counts), events (every\n"
	       "                       outcome), incidents (window, trigger record)\n"
	       "\n"
	       "Exit status: 0 done, 1 the store could not be read, 2 bad command\n"
	       "line or configuration.\n");
}

static int print_json(struct tried *t)
{
	struct json_object *o = json_object_new_object(), *rules = json_object_new_array(),
			   *incs = json_object_new_array();
	char a[64];

	for (size_t i = 0; i < t->rules->n; i++) {
		struct json_object *r = json_object_new_object();
		if (!t->selected[i])
			continue;
		json_object_object_add(r, "name", json_object_new_string(t->rules->v[i].name));
		json_object_object_add(r, "condition",
				       json_object_new_string(fr_rule_condition_name(t->rules->v[i].condition)));
		json_object_object_add(r, "fired", json_object_new_uint64(t->gov.v[i].fired));
		json_object_object_add(r, "joined", json_object_new_uint64(t->gov.v[i].joined));
		json_object_object_add(r, "suppressed", json_object_new_uint64(t->gov.v[i].suppressed));
		json_object_array_add(rules, r);
	}
	for (size_t i = 0; i < t->ninc; i++) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "rule", json_object_new_string(t->rules->v[t->inc[i].rule].name));
		json_object_object_add(x, "trigger_time",
				       json_object_new_string(fr_format_rfc3339(t->inc[i].span.trigger, a, sizeof(a))));
		json_object_object_add(x, "start", json_object_new_string(fr_format_rfc3339(t->inc[i].span.start, a, sizeof(a))));
		json_object_object_add(x, "end", json_object_new_string(fr_format_rfc3339(t->inc[i].span.end, a, sizeof(a))));
		json_object_object_add(x, "joined", json_object_new_uint64(t->inc[i].joined));
		json_object_object_add(x, "trigger", json_object_get(t->inc[i].trigger));
		json_object_array_add(incs, x);
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "events", json_object_get(t->events));
	json_object_object_add(o, "events_unlisted", json_object_new_uint64(t->unlisted));
	json_object_object_add(o, "incidents", incs);
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}

static int rules_test(struct frctl *f, int argc, char **argv)
{
	enum { O_RULE = O_WIN__END, O_JSON };
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		FRCTL_WINDOW_OPTIONS,
		{ "rule", required_argument, NULL, O_RULE },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct frctl_window_args a;
	struct frctl_source s = {};
	struct tried t = {};
	const char *only[64];
	unsigned nonly = 0;
	int c, k, ret = EXIT_FAILURE_;

	frctl_window_args_init(&a);
	while ((c = getopt_long(argc, argv, "c:s:qh", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		k = frctl_window_option(&a, c, optarg);
		if (k < 0)
			return EXIT_USAGE;
		if (k > 0)
			continue;
		switch (c) {
		case O_RULE:
			if (nonly == ELEMENTSOF(only)) {
				frctl_error("--rule: at most %zu", ELEMENTSOF(only));
				return EXIT_USAGE;
			}
			only[nonly++] = optarg;
			break;
		case O_JSON: t.json = true; break;
		case 'h': help(); return EXIT_OK;
		default: return frctl_bad_option("rules test", argv);
		}
	}
	if (optind < argc) {
		frctl_error("rules test: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (a.input || a.incident) {
		frctl_error("rules test: the rules are tried on the store (--input and --incident are not taken)");
		return EXIT_USAGE;
	}
	if (frctl_window_finish(&a) < 0)
		return EXIT_USAGE;
	if (frctl_load_conf(f) < 0)
		return EXIT_USAGE;
	t.rules = &f->conf.rules;
	t.selected = calloc(t.rules->n + 1, sizeof(*t.selected));
	t.events = json_object_new_array();
	if (!t.selected || !t.events || fr_governance_set_rules(&t.gov, t.rules) < 0 ||
	    !(t.text = fr_text_new(FR_TEXT_NO_DATE | FR_TEXT_ONE_LINE)) || fr_json_writer_new(&t.jw) < 0) {
		frctl_error("out of memory");
		goto out;
	}
	for (unsigned i = 0; i < nonly; i++) {
		bool found = false;
		for (size_t j = 0; j < t.rules->n; j++)
			if (!strcmp(t.rules->v[j].name, only[i]))
				found = t.selected[j] = true;
		if (!found) {
			frctl_error("--rule: no rule \"%s\" in %s", only[i], f->config_path);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	for (size_t j = 0; j < t.rules->n; j++) {
		const struct fr_rule *r = &t.rules->v[j];
		bool tryable = r->condition != FR_COND_PRESSURE && r->condition != FR_COND_MANUAL;
		if (!nonly)
			t.selected[j] = true;
		if (t.selected[j] && !tryable && !t.json)
			printf("Not tried: rule %s (%s: %s)\n", r->name, fr_rule_condition_name(r->condition),
			       r->condition == FR_COND_PRESSURE ? "pressure is read live, not stored" : "it fires on frctl freeze");
		t.selected[j] &= tryable;
	}
	a.stream = true;
	a.need_exe = true; /* the records' cgroups and executables, as the daemon has them */
	k = frctl_source_open(f, &a, &s);
	if (k != 0) {
		ret = k;
		goto out;
	}
	while ((k = fr_window_stream_next(s.w)) > 0)
		for (size_t i = 0; i < s.w->n; i++) {
			struct fr_window_entry e;
			char cgroup[4096];
			if (!frctl_window_entry(&a, s.w, i, &e) || fr_record_type_is_meta(e.r.type))
				continue;
			snprintf(cgroup, sizeof(cgroup), "%.*s", (int)e.cgroup_len, e.cgroup ? e.cgroup : "");
			for (size_t j = 0; j < t.rules->n; j++)
				if (t.selected[j] && fr_rule_matches(&t.rules->v[j], &e.r, e.cgroup ? cgroup : NULL) &&
				    fire(&t, s.w, j, &e) < 0) {
					frctl_error("out of memory");
					goto out;
				}
		}
	frctl_source_progress_end(&s);
	if (k < 0) {
		frctl_error("cannot read %s: %s", s.name, strerror(-k));
		goto out;
	}
	if (t.json)
		print_json(&t);
	else
		for (size_t j = 0; j < t.rules->n; j++)
			if (t.selected[j])
				printf("Rule %s: would have fired %" PRIu64 ", joined %" PRIu64 ", been suppressed %" PRIu64 "\n",
				       t.rules->v[j].name, t.gov.v[j].fired, t.gov.v[j].joined, t.gov.v[j].suppressed);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		frctl_error("write error");
		goto out;
	}
	ret = frctl_source_check(&s);
out:
	for (size_t i = 0; i < t.ninc; i++)
		json_object_put(t.inc[i].trigger);
	free(t.inc);
	free(t.selected);
	json_object_put(t.events);
	fr_text_free(t.text);
	fr_json_writer_free(t.jw);
	fr_governance_done(&t.gov);
	if (s.reader)
		frctl_source_done(&s);
	return ret;
}

int verb_rules(struct frctl *f, int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "test") != 0 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0)) {
		frctl_error("rules: what to do? (frctl rules test [OPTIONS])");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "test") != 0) {
		help();
		return EXIT_OK;
	}
	return rules_test(f, argc - 1, argv + 1);
}
