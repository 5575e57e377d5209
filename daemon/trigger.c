/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Triggers and incidents (trigger.h).  Long because an incident's life is
 * one state machine over struct pending, from the record that fires a rule
 * (matching, coalescing, governance) to its file (the window copied, the
 * header, the journal entry, the budget, the exec action); the spare file
 * that makes it durable fast is in incident-spare.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/conditions.h"
#include "../lib/crash-line.h"
#include "../lib/governance.h"
#include "../lib/incident.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/record-json.h"
#include "../lib/store-reader.h"
#include "../lib/window.h"
#include "incident-spare.h"
#include "log.h"
#include "pressure.h"
#include "trigger.h"
#include <limits.h>

/* Open incidents at once; a trigger beyond is counted as suppressed. */
#define PENDING_MAX 16
/* Triggers an incident lists in its metadata; those that join beyond are
 * counted there (triggers_unlisted), and are in its records all the same
 * (their trigger records). */
#define TRIGGERS_LISTED_MAX 100

/*
 * An incident that fits in the spare incident file (incident-spare.h) is
 * written over it in place, made durable without a journal commit, then
 * published under its name; one that does not is written as a new file.
 *
 * Writing ahead.  When an incident's window ends, and the spare is ready,
 * the daemon selects and copies the window's chunks into the spare right
 * away (the header left zero: unsealed, such a spare is not an incident)
 * and starts their writeback, with room left for the metadata to grow by
 * STAGE_META_SLACK (triggers that join).  About 200 ms later, when it
 * writes the incident, the chunks queued since come from the store
 * writer as it queues them (fr_triggers_on_chunk): no walk of the store,
 * no read-back, and no waiting for the store's writes, which queue behind
 * the store's own fdatasync (IOSQE_IO_DRAIN) and so, under I/O load, wait
 * for its journal commit.  The metadata, the header and those chunks are
 * written and the file fdatasync()ed, which has only those pages left to
 * write.  A window that grows after that (a trigger joins and moves its
 * end) or metadata that outgrows its room falls back to writing it whole.
 * The names of the kernel frames the chunks leave to the store's snapshot
 * (lib/kernel-names.h) go last: their chunk is built when the incident is
 * written ahead and again when a chunk of its window brings new kernel
 * addresses, so that the seal only dates it; an incident they take past
 * the spare is written as a new file.  What the incident's durable time
 * went to is logged at debug level (flightrecd -d).
 */
#define STAGE_META_SLACK 16384

struct pending {
	char id[96];
	struct fr_span span;          /* its window (lib/governance.h) */
	uint64_t unlisted;            /* triggers beyond TRIGGERS_LISTED_MAX */
	struct json_object *rules;    /* array of names */
	struct json_object *triggers; /* array of records */
	unsigned meta_gen;            /* changes with rules, triggers, unlisted */
	char *reason;
	char *crash;                  /* the first fatal signal's line and stack
				      (crash_text()), for the journal; NULL: none */
	char **exec;                  /* of the rule that opened it */
	uint64_t exec_timeout_ns;
	sd_event_source *timer;
	sd_event_source *stage_timer; /* at the window's end: write ahead */
	struct fr_triggers *owner;
};

struct action {
	pid_t pid;
	char *incident;
	sd_event_source *child, *timeout;
	struct fr_triggers *owner;
};

struct fr_triggers {
	struct fr_triggers_params p;
	char *store_dir, *config_path, *incidents_dir;
	uint8_t boot_id[16];
	/* names this boot's kernel frames as its snapshot does: lent to the
	 * incidents' kernel names, so they do not load the snapshot */
	const struct fr_ksyms *ksyms;
	struct fr_rules rules;     /* copy owned here */
	struct fr_governance gov;  /* per rule, in its order */
	struct fr_pressure **watch; /* per rule: its watcher, for rules of no record */
	struct pending *pending[PENDING_MAX];
	unsigned npending;
	uint64_t incidents_size;
	uint32_t incidents_max;
	uint64_t written;
	uint64_t failed;      /* incidents lost: not written */
	uint64_t not_renamed; /* durable in the spare, rename failed */
	sd_event_source *sync_soon;

	int dir_fd; /* incidents/ */
	struct fr_spare *spare;

	/* the incident written ahead into the spare (one at a time) */
	struct pending *staged;
	struct fr_incident_builder *stage;
	size_t stage_written;     /* of the builder's bytes, those in the spare */
	int stage_fd;             /* the spare's, and its size */
	uint64_t stage_spare_size;
	uint64_t stage_end;       /* the window's end when it was written ahead */
	char *stage_meta;         /* the metadata then, in the spare too */
	size_t stage_meta_len;
	unsigned stage_meta_gen;  /* of the pending's metadata then */
	size_t tap_bytes;         /* of the chunks the store wrote since */
};

static void unstage(struct fr_triggers *t);


/* A deep copy of the rules that the engine owns. */
static int copy_rules(struct fr_rules *dst, const struct fr_rules *src)
{
	*dst = (struct fr_rules){ .incidents_size = src->incidents_size, .incidents_max = src->incidents_max };
	dst->v = calloc(src->n + 1, sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		if (fr_rule_copy(&dst->v[i], &src->v[i]) < 0) {
			fr_rules_done(dst);
			return -ENOMEM;
		}
		dst->n = i + 1;
	}
	return 0;
}

static void watchers_free(struct fr_pressure **w, size_t n)
{
	for (size_t i = 0; w && i < n; i++)
		fr_pressure_free(w[i]);
	free(w);
}

static void on_pressure(struct fr_pressure *w, uint32_t share_ppm, const char *line, void *userdata);

/* The watchers of the rules that fire on no record: pressure. */
static struct fr_pressure **watchers_new(struct fr_triggers *t, const struct fr_rules *rules)
{
	struct fr_pressure **w = calloc(rules->n + 1, sizeof(*w));

	for (size_t i = 0; w && i < rules->n; i++)
		if (rules->v[i].condition == FR_COND_PRESSURE &&
		    fr_pressure_new(t->p.event, &rules->v[i], t->p.cgroup_fd, on_pressure, t, &w[i]) < 0) {
			watchers_free(w, rules->n);
			return NULL;
		}
	return w;
}

int fr_triggers_set_rules(struct fr_triggers *t, const struct fr_rules *rules)
{
	struct fr_governance gov = t->gov;
	struct fr_pressure **watch;
	struct fr_rules copy;
	int k;

	k = copy_rules(&copy, rules);
	if (k < 0)
		return k;
	/* before the old ones go: a watcher calls back with its rule's index */
	watch = watchers_new(t, rules);
	if (!watch) {
		fr_rules_done(&copy);
		return -ENOMEM;
	}
	/* a rule that keeps its name keeps its governance */
	k = fr_governance_set_rules(&gov, rules);
	if (k < 0) {
		watchers_free(watch, rules->n);
		fr_rules_done(&copy);
		return k;
	}
	watchers_free(t->watch, t->rules.n);
	fr_rules_done(&t->rules);
	t->rules = copy;
	t->gov = gov;
	t->watch = watch;
	t->incidents_size = rules->incidents_size;
	t->incidents_max = rules->incidents_max;
	if (t->spare)
		fr_spare_set_budget(t->spare, t->incidents_size);
	return 0;
}

/* Whether @id is that of an incident still open, other than @self: its
 * file name is taken, though the file does not exist yet. */
static bool id_pending(const struct fr_triggers *t, const char *id, const struct pending *self)
{
	for (unsigned i = 0; i < t->npending; i++)
		if (t->pending[i] != self && !strcmp(t->pending[i]->id, id))
			return true;
	return false;
}

static bool spare_name_taken(const char *id, void *userdata)
{
	return id_pending(userdata, id, NULL);
}

void fr_triggers_lend_ksyms(struct fr_triggers *t, const struct fr_ksyms *ks)
{
	t->ksyms = ks;
}

int fr_triggers_new(const struct fr_triggers_params *p, const struct fr_rules *rules, struct fr_triggers **ret)
{
	struct fr_triggers *t = calloc(1, sizeof(*t));
	int k;

	if (!t)
		return -ENOMEM;
	t->p = *p;
	t->dir_fd = -EBADF;
	memcpy(t->boot_id, p->boot_id, 16);
	t->store_dir = strdup(p->store_dir);
	t->config_path = strdup(p->config_path);
	if (!t->store_dir || !t->config_path ||
	    asprintf(&t->incidents_dir, "%s/%s", p->store_dir, FR_INCIDENT_DIR) < 0) {
		fr_triggers_free(t);
		return -ENOMEM;
	}
	if (mkdir(t->incidents_dir, 0750) < 0 && errno != EEXIST) {
		k = negative_errno();
		fr_triggers_free(t);
		return k;
	}
	k = fr_triggers_set_rules(t, rules);
	if (k < 0) {
		fr_triggers_free(t);
		return k;
	}
	t->dir_fd = open(t->incidents_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0) {
		k = negative_errno();
		fr_triggers_free(t);
		return k;
	}
	struct fr_spare_params sp = { .event = p->event, .dir_fd = t->dir_fd, .dir = t->incidents_dir,
				       .budget = t->incidents_size, .taken = spare_name_taken, .userdata = t };
	k = fr_spare_new(&sp, &t->spare);
	if (k < 0) {
		fr_triggers_free(t);
		return k;
	}
	*ret = t;
	return 0;
}

static void pending_free(struct pending *p)
{
	if (!p)
		return;
	if (p->owner && p->owner->staged == p)
		unstage(p->owner);
	sd_event_source_disable_unref(p->timer);
	sd_event_source_disable_unref(p->stage_timer);
	json_object_put(p->rules);
	json_object_put(p->triggers);
	free(p->reason);
	free(p->crash);
	if (p->exec)
		for (char **a = p->exec; *a; a++)
			free(*a);
	free(p->exec);
	free(p);
}

struct fr_triggers *fr_triggers_free(struct fr_triggers *t)
{
	if (!t)
		return NULL;
	for (unsigned i = 0; i < t->npending; i++)
		pending_free(t->pending[i]);
	sd_event_source_disable_unref(t->sync_soon);
	/* before the directory it uses */
	fr_spare_free(t->spare);
	closep(&t->dir_fd);
	fr_governance_done(&t->gov);
	watchers_free(t->watch, t->rules.n);
	fr_rules_done(&t->rules);
	free(t->store_dir);
	free(t->config_path);
	free(t->incidents_dir);
	free(t);
	return NULL;
}

static struct json_object *record_json(struct fr_triggers *t, const struct fr_record *rec, const char *cgroup,
				       const char *exe, const struct fr_frame *frames, int nframes)
{
	struct fr_record_context ctx = {
		/* the record's boottime stamp, on today's wall clock */
		.wall_ns = rec->ts + (fr_now_ns(CLOCK_REALTIME) - fr_now_ns(CLOCK_BOOTTIME)),
		.boot_id = t->boot_id,
		.cgroup = cgroup,
		.cgroup_len = cgroup ? (uint32_t)strlen(cgroup) : 0,
		.exe = exe,
		.exe_len = exe ? (uint32_t)strlen(exe) : 0,
		.frames = frames,
		.nframes = nframes,
	};
	return fr_record_to_json(rec, &ctx);
}

/* Frames in a fatal signal's journal entry, at most, as systemd-coredump
 * prints its stack trace: enough to say where, bounded. */
#define CRASH_FRAMES_MAX 16

/* A fatal signal for the incident's journal entry: its line
 * (lib/crash-line.h) and its stack, one frame a line, as
 * systemd-coredump's entries have them.  Bytes a process chose (names)
 * below 0x20 become '?'.  NULL when @rec is no signal with a stack. */
static char *crash_text(const struct fr_record *rec, const struct fr_frame *f, int n)
{
	char line[1024], name[512], *buf = NULL;
	size_t len = 0;
	int first = fr_crash_first_frame(rec, n), shown = 0;
	FILE *m;

	if (rec->type != FR_REC_SIGNAL || !f || n <= 0 || !(m = open_memstream(&buf, &len)))
		return NULL;
	fprintf(m, "%s\n\nStack trace of thread %" PRIu32 ":\n", fr_crash_title(rec, line, sizeof(line)),
		rec->signal.sender_tid);
	for (int i = first; i < n && shown < CRASH_FRAMES_MAX; i++, shown++) {
		uint32_t ml;
		const char *mod = fr_frame_module_base(&f[i], &ml);
		fprintf(m, "#%-2d 0x%016" PRIx64 " %s", shown, f[i].addr, fr_frame_name(&f[i], true, name, sizeof(name)));
		if (f[i].sym && mod)
			fprintf(m, " (%.*s)", (int)ml, mod);
		fputc('\n', m);
	}
	if (n - first > shown)
		fprintf(m, "(%d frames more)\n", n - first - shown);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n')
			*c = '?';
	return buf;
}

/* Windows are wall-clock ranges: that is how readers select chunks. */
static uint64_t rec_wall(const struct fr_record *rec)
{
	return rec->ts + (fr_now_ns(CLOCK_REALTIME) - fr_now_ns(CLOCK_BOOTTIME));
}

static int on_window_done(sd_event_source *s, uint64_t usec, void *userdata);

static int on_sync_soon(sd_event_source *s, void *userdata)
{
	struct fr_triggers *t = userdata;

	t->sync_soon = sd_event_source_disable_unref(t->sync_soon);
	t->p.flush(FR_FLUSH_SYNCED, 0, t->p.userdata);
	return 0;
}

static int on_stage(sd_event_source *s, uint64_t usec, void *userdata);

static int arm(struct pending *p)
{
	struct fr_triggers *t = p->owner;
	uint64_t now = fr_now_ns(CLOCK_REALTIME);
	/* the window's end, plus a little for its last records to arrive */
	uint64_t wait = p->span.end > now ? p->span.end - now : 0;

	/* written ahead at the window's end (again, if it moved) */
	if (t->staged == p && t->stage_end != p->span.end)
		unstage(t);
	p->stage_timer = sd_event_source_disable_unref(p->stage_timer);
	(void)sd_event_add_time_relative(t->p.event, &p->stage_timer, CLOCK_MONOTONIC, wait / 1000, 1000, on_stage, p);
	wait += FR_INCIDENT_SETTLE_NS;
	if (p->timer)
		return sd_event_source_set_time_relative(p->timer, wait / 1000);
	return sd_event_add_time_relative(p->owner->p.event, &p->timer, CLOCK_MONOTONIC, wait / 1000, 1000,
					  on_window_done, p);
}

/* What fired a rule: @rec, a record (with what the recorder knows of it:
 * its cgroup, exe and named stack; for a freeze, a mark that the
 * incident lists as the documented stand-in), or (@rec NULL) a value a
 * watcher saw, @what its JSON object for the incident, at @wall. */
struct cause {
	const struct fr_record *rec;
	const char *cgroup, *exe;
	const struct fr_frame *frames;
	int nframes;
	struct json_object *what;
	uint64_t wall;
};

/* The trigger record, stamped now, carries the process of the record that
 * fired the rule, so readers can tell which one it was. */
static void write_trigger_record(struct fr_triggers *t, const struct fr_rule *r, const struct pending *p,
				 const struct cause *c)
{
	struct fr_record rec = { .type = FR_REC_TRIGGER, .ts = fr_now_ns(CLOCK_BOOTTIME) };
	const struct fr_record *cause = c->rec;

	if (cause) {
		rec.pid = cause->pid;
		rec.tid = cause->tid;
		rec.cgroup_id = cause->cgroup_id;
		memcpy(rec.comm, cause->comm, sizeof(rec.comm));
		rec.comm_len = cause->comm_len;
	}
	rec.trigger.rule = r->name;
	rec.trigger.rule_len = (uint32_t)strlen(r->name);
	rec.trigger.incident = p->id;
	rec.trigger.incident_len = (uint32_t)strlen(p->id);
	/* a freeze or a watched value fires on no record of the store */
	if (cause && fr_condition(r->condition)->record_type) {
		rec.trigger.cause_type = cause->type;
		rec.trigger.cause_ago_ns = (int64_t)(rec.ts - cause->ts);
	}
	t->p.record(&rec, t->p.userdata);
}

/* The cause as the incident lists it. */
static struct json_object *cause_json(struct fr_triggers *t, const struct cause *c)
{
	if (!c->rec)
		return json_object_get(c->what);
	return record_json(t, c->rec, c->cgroup, c->exe, c->frames, c->nframes);
}

/* Rule @ri fired on @c.  Returns the incident it joined or opened, or NULL
 * when governance suppressed it. */
static struct pending *fire(struct fr_triggers *t, size_t ri, const struct cause *c, const char *reason)
{
	const struct fr_rule *r = &t->rules.v[ri];
	struct fr_rule_gov *st = &t->gov.v[ri];
	uint64_t wall = c->rec ? rec_wall(c->rec) : c->wall;
	struct fr_span *open[PENDING_MAX], span;
	struct pending *p;
	unsigned which = 0;
	bool extended = false;
	int ka;

	for (unsigned i = 0; i < t->npending; i++)
		open[i] = &t->pending[i]->span;
	switch (fr_governance_fire(&t->gov, ri, r, wall, fr_now_ns(CLOCK_MONOTONIC), open, t->npending, PENDING_MAX,
				   &which, &extended, &span)) {
	case FR_FIRE_JOINED:
		p = t->pending[which];
		p->meta_gen++;
		if (json_object_array_length(p->triggers) < TRIGGERS_LISTED_MAX)
			json_object_array_add(p->triggers, cause_json(t, c));
		else
			p->unlisted++;
		if (!p->crash && c->rec)
			p->crash = crash_text(c->rec, c->frames, c->nframes);
		bool listed = false;
		for (size_t k = 0; k < json_object_array_length(p->rules); k++)
			listed |= !strcmp(json_object_get_string(json_object_array_get_idx(p->rules, k)), r->name);
		if (!listed)
			json_object_array_add(p->rules, json_object_new_string(r->name));
		if (extended)
			(void)arm(p);
		write_trigger_record(t, r, p, c);
		return p;
	case FR_FIRE_SUPPRESSED_COOLDOWN:
		return NULL;
	case FR_FIRE_SUPPRESSED_BUDGET:
		if (st->suppressed == 1 || st->suppressed % 100 == 0)
			log_warning("Rule %s: incident suppressed (at most %u an hour, or too many open); %" PRIu64 " so far.",
				    r->name, st->hour_cap, st->suppressed);
		return NULL;
	case FR_FIRE_OPENED:
		break;
	}

	p = calloc(1, sizeof(*p));
	if (!p) {
		t->failed++;
		log_oom();
		return NULL;
	}
	p->owner = t;
	p->span = span;
	p->rules = json_object_new_array();
	p->triggers = json_object_new_array();
	p->reason = reason ? strdup(reason) : NULL;
	p->exec_timeout_ns = r->exec_timeout_ns;
	p->exec = fr_strv_copy(r->exec);
	json_object_array_add(p->rules, json_object_new_string(r->name));
	json_object_array_add(p->triggers, cause_json(t, c));
	p->crash = c->rec ? crash_text(c->rec, c->frames, c->nframes) : NULL;

	/* id: trigger time and rule, unique among the files */
	time_t secs = (time_t)(wall / NSEC_PER_SEC);
	struct tm tm;
	char stamp[32], path[PATH_MAX];
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (unsigned n = 0;; n++) {
		snprintf(p->id, sizeof(p->id), n ? "%s-%s-%u" : "%s-%s", stamp, r->name, n);
		snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);
		bool taken = access(path, F_OK) == 0 || id_pending(t, p->id, p);
		/* the incident in a stranded spare gets its id's name later */
		taken |= fr_spare_holds(t->spare, p->id);
		if (!taken)
			break;
	}
	ka = arm(p);
	if (ka < 0) {
		t->failed++;
		log_error_errno(ka, "Rule %s fired, but incident %s cannot be scheduled: %m", r->name, p->id);
		pending_free(p);
		return NULL;
	}
	t->pending[t->npending++] = p;
	write_trigger_record(t, r, p, c);
	/* the moments before go to disk now, whatever happens next; deferred
	 * because we may be inside the ring buffer's callback */
	if (!t->sync_soon)
		(void)sd_event_add_defer(t->p.event, &t->sync_soon, on_sync_soon, t);
	char b[32], a[32];
	log_notice("Rule %s fired: incident %s, window -%s/+%s, written when it is complete.", r->name, p->id,
		   fr_format_duration(r->before_ns, b, sizeof(b)), fr_format_duration(r->after_ns, a, sizeof(a)));
	return p;
}

/* A pressure rule's watcher saw its stall cross the threshold. */
static void on_pressure(struct fr_pressure *w, uint32_t share_ppm, const char *line, void *userdata)
{
	struct fr_triggers *t = userdata;
	struct json_object *o;
	char when[64], over[32], reason[160];
	size_t ri;

	for (ri = 0; ri < t->rules.n && t->watch[ri] != w; ri++)
		;
	if (ri == t->rules.n)
		return;
	const struct fr_rule *r = &t->rules.v[ri];
	const char *res = fr_pressure_resource_name(r->pressure.resource), *kind = r->pressure.full ? "full" : "some";
	struct cause c = { .wall = fr_now_ns(CLOCK_REALTIME) };

	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string("pressure"));
	json_object_object_add(o, "time", json_object_new_string(fr_format_rfc3339(c.wall, when, sizeof(when))));
	json_object_object_add(o, "resource", json_object_new_string(res));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "cgroup", r->cgroup ? json_object_new_string(r->cgroup) : NULL);
	json_object_object_add(o, "stalled_percent", json_object_new_double(share_ppm / 1e4));
	json_object_object_add(o, "threshold_percent", json_object_new_double(r->pressure.ppm / 1e4));
	json_object_object_add(o, "over", json_object_new_string(fr_format_duration(r->pressure.over_ns, over, sizeof(over))));
	json_object_object_add(o, "psi", json_object_new_string(line));
	c.what = o;
	snprintf(reason, sizeof(reason), "%s pressure (%s) %.2f%% of %s%s%s", res, kind, share_ppm / 1e4, over,
		 r->cgroup ? " in " : "", r->cgroup ? r->cgroup : "");
	fire(t, ri, &c, reason);
	json_object_put(o);
}

bool fr_triggers_may_match(const struct fr_triggers *t, uint16_t type)
{
	for (size_t i = 0; i < t->rules.n; i++)
		if (fr_condition(t->rules.v[i].condition)->record_type == type)
			return true;
	return false;
}

void fr_triggers_on_exe(struct fr_triggers *t, const struct fr_record *exec, const char *exe)
{
	uint64_t at = rec_wall(exec), when;

	if (!exe)
		return;
	for (unsigned i = 0; i < t->npending; i++) {
		struct json_object *trig = t->pending[i]->triggers;
		for (size_t k = 0; k < json_object_array_length(trig); k++) {
			struct json_object *o = json_object_array_get_idx(trig, k), *v, *tm;
			/* fired on a record of this pid from after the exec:
			 * its exe was the image before (or none) */
			if (json_object_object_get_ex(o, "pid", &v) && json_object_get_int64(v) == (int64_t)exec->pid &&
			    json_object_object_get_ex(o, "time", &tm) &&
			    fr_parse_time(json_object_get_string(tm), at, &when) == 0 && when >= at)
				json_object_object_add(o, "exe", json_object_new_string(exe));
		}
	}
}

void fr_triggers_on_record(struct fr_triggers *t, const struct fr_record *rec, const char *cgroup,
			   const char *exe, const struct fr_frame *frames, int nframes)
{
	struct cause c = { .rec = rec, .cgroup = cgroup, .exe = exe, .frames = frames, .nframes = nframes };

	for (size_t i = 0; i < t->rules.n; i++)
		if (fr_rule_matches(&t->rules.v[i], rec, cgroup))
			fire(t, i, &c, NULL);
}

/* Removes the oldest incident files beyond the count and size budget. */
static void enforce_budget(struct fr_triggers *t)
{
	for (;;) {
		DIR *d = opendir(t->incidents_dir);
		struct dirent *de;
		char oldest[256] = "";
		uint64_t total = 0, n = 0;

		if (!d)
			return;
		while ((de = readdir(d))) {
			struct stat st;
			size_t l = strlen(de->d_name);
			if (l < 5 || strcmp(de->d_name + l - 4, FR_INCIDENT_SUFFIX) != 0)
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
				continue;
			total += (uint64_t)st.st_blocks * 512;
			n++;
			/* ids start with their time: the smallest name is the oldest */
			if (!oldest[0] || strcmp(de->d_name, oldest) < 0)
				snprintf(oldest, sizeof(oldest), "%s", de->d_name);
		}
		/* the spare takes its room from the budget too */
		struct stat sp;
		if (fstatat(dirfd(d), FR_SPARE_NAME, &sp, 0) == 0)
			total += (uint64_t)sp.st_blocks * 512;
		closedir(d);
		if ((total <= t->incidents_size && n <= t->incidents_max) || n <= 1)
			return;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", t->incidents_dir, oldest);
		if (unlink(path) < 0)
			return;
		log_notice("Removed incident %s: the incidents budget (%u files, %" PRIu64 " bytes) was exceeded.",
			   oldest, t->incidents_max, t->incidents_size);
	}
}

static int on_action_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct action *a = userdata;

	log_warning("Action for incident %s did not finish in time; killing it.", a->incident);
	/* the whole process group (the child called setsid()): what it started
	 * in the background dies with it instead of outliving the timeout */
	if (kill(-a->pid, SIGKILL) < 0)
		(void)kill(a->pid, SIGKILL);
	return 0;
}

static int on_action_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct action *a = userdata;

	if (si->si_code == CLD_EXITED && si->si_status == 0)
		log_info("Action for incident %s succeeded.", a->incident);
	else if (si->si_code == CLD_EXITED)
		log_warning("Action for incident %s failed with exit status %d.", a->incident, si->si_status);
	else
		log_warning("Action for incident %s was killed by signal %d.", a->incident, si->si_status);
	sd_event_source_disable_unref(a->timeout);
	sd_event_source_disable_unref(a->child);
	free(a->incident);
	free(a);
	return 0;
}

/* The rule's command, without a shell, with the incident path appended;
 * its output goes where the daemon's goes (the journal).  Never waited
 * for: its exit is an event like any other, bounded by a timeout. */
static void run_action(struct fr_triggers *t, struct pending *p, const char *path)
{
	size_t n = 0;
	struct action *a;
	pid_t pid;

	while (p->exec[n])
		n++;
	char **argv = calloc(n + 2, sizeof(char *));
	if (!argv)
		return;
	memcpy(argv, p->exec, n * sizeof(char *));
	argv[n] = (char *)path;
	pid = fork();
	if (pid < 0) {
		log_error_errno(negative_errno(), "Failed to start the action for incident %s: %m", p->id);
		free(argv);
		return;
	}
	if (pid == 0) {
		sigset_t all;
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		setsid();
		execv(argv[0], argv);
		fprintf(stderr, SD_ERR "Failed to execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(argv);
	a = calloc(1, sizeof(*a));
	if (!a)
		return;
	a->pid = pid;
	a->owner = t;
	a->incident = strdup(p->id);
	if (sd_event_add_child(t->p.event, &a->child, pid, WEXITED, on_action_exit, a) < 0 ||
	    sd_event_add_time_relative(t->p.event, &a->timeout, CLOCK_MONOTONIC, p->exec_timeout_ns / 1000, 1000,
				       on_action_timeout, a) < 0)
		log_warning("Cannot watch the action for incident %s (pid %d).", p->id, pid);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf) {
		len = fread(buf, 1, (1 << 20) - 1, f);
		buf[len] = 0;
	}
	fclose(f);
	return buf;
}

static struct json_object *incident_meta(struct fr_triggers *t, const struct pending *p)
{
	struct json_object *meta = json_object_new_object();
	char buf[64], host[256] = "";
	struct utsname u;

	gethostname(host, sizeof(host) - 1);
	uname(&u);
	json_object_object_add(meta, "id", json_object_new_string(p->id));
	json_object_object_add(meta, "rules", json_object_get(p->rules));
	json_object_object_add(meta, "reason", p->reason ? json_object_new_string(p->reason) : NULL);
	json_object_object_add(meta, "start", json_object_new_string(fr_format_rfc3339(p->span.start, buf, sizeof(buf))));
	json_object_object_add(meta, "end", json_object_new_string(fr_format_rfc3339(p->span.end, buf, sizeof(buf))));
	json_object_object_add(meta, "trigger_time", json_object_new_string(fr_format_rfc3339(p->span.trigger, buf, sizeof(buf))));
	json_object_object_add(meta, "triggers", json_object_get(p->triggers));
	if (p->unlisted)
		json_object_object_add(meta, "triggers_unlisted", json_object_new_uint64(p->unlisted));
	json_object_object_add(meta, "host", json_object_new_string(host));
	json_object_object_add(meta, "kernel", json_object_new_string(u.release));
	json_object_object_add(meta, "boot_id", json_object_new_string(fr_format_boot_id(t->boot_id, buf, sizeof(buf))));
	char *conf = read_file(t->config_path);
	json_object_object_add(meta, "config_path", json_object_new_string(t->config_path));
	json_object_object_add(meta, "config", conf ? json_object_new_string(conf) : NULL);
	free(conf);
	return meta;
}

static void unstage(struct fr_triggers *t)
{
	t->tap_bytes = 0;
	t->stage = fr_incident_builder_free(t->stage);
	free(t->stage_meta);
	t->stage_meta = NULL;
	t->staged = NULL;
	/* the spare keeps what was written ahead, unsealed: the next incident
	 * is written over it whole, header first in the file */
}

/* A chunk the store queued while an incident is written ahead: one of
 * its window's goes into it now, and the kernel names of what it has are
 * built again, so that finishing it has neither to do. */
void fr_triggers_on_chunk(struct fr_triggers *t, const void *chunk, size_t len)
{
	struct fr_chunk_info ci;

	if (!t || !t->staged || fr_chunk_header_parse(chunk, &ci) < 0)
		return;
	/* as the window selection has it: overlapping, on the wall clock (a
	 * window whose end moves since is written whole) */
	uint64_t first = ci.first_ts + (uint64_t)ci.realtime_offset;
	uint64_t last = ci.last_ts + (uint64_t)ci.realtime_offset;
	if (last < t->staged->span.start || first > t->staged->span.end)
		return;
	/* bounded by the spare: past it the incident is written whole anyway */
	if (t->tap_bytes + len > t->stage_spare_size || fr_incident_builder_add(t->stage, chunk, len) < 0 ||
	    fr_incident_builder_prepare_names(t->stage) < 0) {
		unstage(t);
		return;
	}
	t->tap_bytes += len;
}

/* The window is complete: its chunks go into the spare now, unsealed, and
 * their writeback starts (see "Writing ahead" at the top). */
static void stage(struct fr_triggers *t, struct pending *p)
{
	struct json_object *meta = NULL;
	struct fr_store_reader *r = NULL;
	struct fr_chunk_ref *refs = NULL;
	struct fr_incident_builder *b = NULL;
	size_t nrefs = 0, len, off;
	const uint8_t *data;
	const char *m;
	uint64_t spare_size;
	int k, fd;

	fd = fr_spare_fd(t->spare, &spare_size);
	if (t->staged || fd < 0)
		return;
	/* the chunks queued from now on are taken as they are queued */
	t->p.flush(FR_FLUSH_WRITTEN, 0, t->p.userdata);
	meta = incident_meta(t, p);
	m = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN);
	k = fr_store_reader_open(t->store_dir, &r);
	if (k >= 0) {
		struct fr_window_query q = { .since_ns = p->span.start, .until_ns = p->span.end };
		k = fr_window_select(r, &q, &refs, &nrefs);
	}
	if (k >= 0) {
		uint64_t need = fr_incident_size_max(m, refs, nrefs) + STAGE_META_SLACK;
		fr_spare_want(t->spare, need);
		k = need > spare_size ? -EFBIG : fr_incident_builder_new(strlen(m) + STAGE_META_SLACK, &b);
		if (k >= 0)
			fr_incident_builder_lend_ksyms(b, t->boot_id, t->ksyms);
	}
	if (k >= 0)
		k = fr_incident_builder_add_refs(b, r, refs, nrefs);
	/* its kernel names now, not when it is sealed */
	if (k >= 0)
		k = fr_incident_builder_prepare_names(b);
	if (k >= 0) {
		data = fr_incident_builder_data(b, &len);
		off = fr_incident_builder_chunks_offset(b);
		k = fr_incident_pwrite(fd, data + off, len - off, off);
		/* the metadata as it is now, padded as the seal pads it: when
		 * it has not changed by then, the incident writes only its
		 * header */
		size_t room_len = off - sizeof(struct fr_incident_header), ml = strlen(m);
		_cleanup_free_ char *room = malloc(room_len);
		if (k == 0 && !room)
			k = -ENOMEM;
		if (k == 0) {
			memcpy(room, m, ml);
			memset(room + ml, ' ', room_len - ml);
			k = fr_incident_pwrite(fd, room, room_len, sizeof(struct fr_incident_header));
		}
		if (k < 0) {
			log_warning_errno(k, "Failed to write over the spare incident file: %m");
			fr_spare_drop(t->spare);
		} else {
			/* most of the file is on its way to the disk before the
			 * incident is complete */
			(void)sync_file_range(fd, sizeof(struct fr_incident_header), (off64_t)(len - sizeof(struct fr_incident_header)),
					      SYNC_FILE_RANGE_WRITE);
			t->staged = p;
			t->stage = TAKE_PTR(b);
			t->stage_written = len;
			t->stage_fd = fd;
			t->stage_spare_size = spare_size;
			t->stage_end = p->span.end;
			t->stage_meta = strdup(m);
			t->stage_meta_len = ml;
			t->stage_meta_gen = p->meta_gen;
		}
	}
	fr_incident_builder_free(b);
	free(refs);
	fr_store_reader_free(r);
	json_object_put(meta);
}

static int on_stage(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct pending *p = userdata;

	p->stage_timer = sd_event_source_disable_unref(p->stage_timer);
	stage(p->owner, p);
	return 0;
}

/* The incident written ahead, completed: the chunks the store wrote since
 * that overlap the window, the metadata, the sealed header, then
 * fdatasync.  Returns its bytes once durable, 0 when it must be written
 * whole instead, or -errno. */
static int64_t finish_staged(struct fr_triggers *t, const struct pending *p, const char *meta,
			     struct fr_kernel_names_stats *names, uint64_t *ret_sealed, uint64_t *ret_written)
{
	struct fr_incident_builder *b = t->stage;
	const uint8_t *data;
	uint64_t spare_size;
	size_t len;
	int k;

	/* the same window, and the same spare, still ready; the chunks the
	 * store wrote since are in it (fr_triggers_on_chunk()) */
	if (t->staged != p || t->stage_end != p->span.end || fr_spare_fd(t->spare, &spare_size) != t->stage_fd)
		return 0;
	k = fr_incident_builder_seal(b, meta);
	if (k < 0)
		return 0; /* metadata beyond its room, or no memory: written whole */
	*ret_sealed = fr_now_ns(CLOCK_MONOTONIC);
	fr_incident_builder_names_stats(b, names);
	data = fr_incident_builder_data(b, &len);
	/* the chunks that came since, and the kernel names sealed in, can
	 * take it past the spare */
	if (len > t->stage_spare_size)
		return 0;
	/* the header, and the metadata as far as it differs from what was
	 * written ahead (the rest of its room is in the spare already), then
	 * the chunks that came after the write-ahead */
	size_t head = sizeof(struct fr_incident_header);
	if (!t->stage_meta || strcmp(meta, t->stage_meta) != 0)
		head += MAX(strlen(meta), t->stage_meta_len);
	k = fr_incident_pwrite(t->stage_fd, data, head, 0);
	if (k == 0)
		k = fr_incident_pwrite(t->stage_fd, data + t->stage_written, len - t->stage_written, t->stage_written);
	*ret_written = fr_now_ns(CLOCK_MONOTONIC);
	if (k == 0 && fdatasync(t->stage_fd) < 0)
		k = negative_errno();
	if (k < 0) {
		log_warning_errno(k, "Failed to write over the spare incident file: %m");
		fr_spare_drop(t->spare);
		return 0;
	}
	return (int64_t)len;
}

/* Writes the incident over the spare (when there is one and it fits):
 * returns its bytes once they are durable, 0 when the spare cannot take
 * it, or -errno. */
static int64_t write_spare(struct fr_triggers *t, const char *meta, struct fr_store_reader *r,
			   const struct fr_chunk_ref *refs, size_t nrefs, struct fr_kernel_names_stats *names)
{
	uint64_t need = fr_incident_size_max(meta, refs, nrefs);
	struct fr_incident_builder *b = NULL;
	const uint8_t *data;
	uint64_t spare_size;
	size_t len;
	int k, fd;

	fr_spare_want(t->spare, need);
	fd = fr_spare_fd(t->spare, &spare_size);
	/* not over another incident written ahead into it */
	if (fd < 0 || need > spare_size || t->staged)
		return 0;
	k = fr_incident_builder_new(strlen(meta), &b);
	if (k == 0)
		fr_incident_builder_lend_ksyms(b, t->boot_id, t->ksyms);
	if (k == 0)
		k = fr_incident_builder_add_refs(b, r, refs, nrefs);
	if (k == 0)
		k = fr_incident_builder_seal(b, meta);
	if (k == 0) {
		fr_incident_builder_names_stats(b, names);
		data = fr_incident_builder_data(b, &len);
		/* the kernel names sealed in can take it past @need */
		if (len > spare_size) {
			fr_incident_builder_free(b);
			return 0;
		}
		k = fr_incident_write_at(fd, data, len);
		if (k < 0) {
			/* what it holds now is unknown: a new one is made */
			log_warning_errno(k, "Failed to write over the spare incident file: %m");
			fr_spare_drop(t->spare);
			k = 0;
			len = 0;
		}
	}
	fr_incident_builder_free(b);
	return k < 0 ? k : (int64_t)len;
}

static void finalize(struct fr_triggers *t, struct pending *p)
{
	struct json_object *meta = NULL;
	_cleanup_free_ char *meta_ahead = NULL;
	struct fr_store_reader *r = NULL;
	struct fr_chunk_ref *refs = NULL;
	char path[PATH_MAX];
	const char *m, *how = "a new file";
	size_t nrefs = 0;
	int64_t bytes = 0;
	uint64_t t0 = fr_now_ns(CLOCK_MONOTONIC), tf, tm, ts = 0, t1, t_sealed = 0, t_written = 0;
	struct fr_kernel_names_stats names = {};
	bool spare = false, written_ahead;
	int k = 0;

	/* an incident left in the spare by a failed rename: named now, and
	 * the spare made again below */
	fr_spare_retry(t->spare);
	/* everything up to now (past the window's end) into the store first:
	 * queued is enough when it was written ahead (the new chunks came
	 * through fr_triggers_on_chunk; an open chunk whose records all came
	 * after the window stays open, which is most of the time, since the
	 * write-ahead closed them at the window's end), readable otherwise;
	 * the store syncs it on its own schedule */
	written_ahead = t->staged == p && t->stage_end == p->span.end;
	if (written_ahead)
		t->p.flush(FR_FLUSH_QUEUED, p->span.end, t->p.userdata);
	else
		t->p.flush(FR_FLUSH_WRITTEN, 0, t->p.userdata);
	tf = fr_now_ns(CLOCK_MONOTONIC);
	/* the metadata as written ahead, when no trigger joined since (the
	 * same window: read again, the configuration file would be all) */
	if (written_ahead && t->stage_meta && p->meta_gen == t->stage_meta_gen)
		meta_ahead = strdup(t->stage_meta);
	if (meta_ahead)
		m = meta_ahead;
	else {
		meta = incident_meta(t, p);
		m = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN);
	}
	snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);

	tm = fr_now_ns(CLOCK_MONOTONIC);
	bytes = finish_staged(t, p, m, &names, &t_sealed, &t_written);
	if (bytes > 0)
		how = "written ahead into the spare";
	if (t->staged == p)
		unstage(t);
	if (bytes == 0) {
		if (written_ahead)
			t->p.flush(FR_FLUSH_WRITTEN, 0, t->p.userdata);
		k = fr_store_reader_open(t->store_dir, &r);
		if (k >= 0) {
			struct fr_window_query q = { .since_ns = p->span.start, .until_ns = p->span.end };
			k = fr_window_select(r, &q, &refs, &nrefs);
		}
		ts = fr_now_ns(CLOCK_MONOTONIC);
		if (k >= 0) {
			bytes = write_spare(t, m, r, refs, nrefs, &names);
			if (bytes > 0)
				how = "over the spare";
			else if (bytes == 0)
				bytes = fr_incident_write(path, m, r, refs, nrefs, &names);
		}
	}
	spare = bytes > 0 && strcmp(how, "a new file") != 0;
	if (k >= 0 && bytes < 0)
		k = (int)bytes;
	t1 = fr_now_ns(CLOCK_MONOTONIC);
	if (t_written)
		/* written ahead: where its durable time goes */
		log_debug("Incident %s: store flushed %.3f ms, metadata %.3f ms, sealed %.3f ms, written %.3f ms, "
			  "fdatasync %.3f ms, %" PRIu64 " kernel functions named from the snapshot.",
			  p->id, (double)(tf - t0) / 1e6, (double)(tm - tf) / 1e6, (double)(t_sealed - tm) / 1e6,
			  (double)(t_written - t_sealed) / 1e6, (double)(t1 - t_written) / 1e6, names.symbols);
	else
		log_debug("Incident %s: store written %.2f ms, window selected %.2f ms, copied and synced %.2f ms (%s), "
			  "%" PRIu64 " kernel functions named from the snapshot.",
			  p->id, (double)(tf - t0) / 1e6, ts ? (double)(ts - tf) / 1e6 : 0.0,
			  (double)(t1 - (ts ? ts : tf)) / 1e6, how, names.symbols);
	if (names.addrs_left_out)
		log_warning("Incident %s: %" PRIu64 " kernel frame addresses left unnamed (more than %u distinct ones).",
			    p->id, names.addrs_left_out, FR_KERNEL_NAMES_ADDRS_MAX);
	free(refs);
	fr_store_reader_free(r);
	if (k >= 0 && spare) {
		char name[256];
		/* durable now: its name, cut to its length first, and the
		 * directory's sync queued */
		int kp = fr_spare_publish(t->spare, p->id, (uint64_t)bytes, name, sizeof(name));
		fr_spare_count_use(t->spare);
		if (kp < 0) {
			/* durable all the same: announced, with where it is */
			log_error_errno(kp, "Incident %s is durable in %s/%s but cannot be renamed: %m", p->id,
					t->incidents_dir, FR_SPARE_NAME);
			t->not_renamed++;
			snprintf(path, sizeof(path), "%s/%s", t->incidents_dir, FR_SPARE_NAME);
		} else
			snprintf(path, sizeof(path), "%s/%s", t->incidents_dir, name);
	}
	fr_spare_make(t->spare);
	if (k < 0) {
		t->failed++;
		log_error_errno(k, "Failed to write incident %s: %m", p->id);
	} else {
		const char *rules = json_object_to_json_string_ext(p->rules, JSON_C_TO_STRING_PLAIN);
		t->written++;
		log_notice("Incident %s captured: %s, %zu triggers, %" PRId64 " bytes, durable %.2f ms after its window.",
			   p->id, path, json_object_array_length(p->triggers) + (size_t)p->unlisted, bytes,
			   (double)(t1 - t0) / 1e6);
		char ws[64], we[64], tt[64];
		/* the entry operators alert on, and journal collectors
		 * (systemd-journal-upload) carry off the host as it is: every
		 * field is documented in flightrecd(8), "The journal entry".  The
		 * boot and the host are journald's own _BOOT_ID and _HOSTNAME. */
		/* a crash: where, in the message itself, as systemd-coredump's */
		sd_journal_send("MESSAGE=flightrec incident %s captured (rules %s): %s%s%s", p->id, rules, path,
				p->crash ? "\n\n" : "", p->crash ? p->crash : "",
				"CRASH=%.*s", p->crash ? (int)strcspn(p->crash, "\n") : 0, p->crash ? p->crash : "",
				"MESSAGE_ID=" FR_INCIDENT_MESSAGE_ID, "PRIORITY=4", "INCIDENT=%s", p->id,
				"RULE=%s", json_object_get_string(json_object_array_get_idx(p->rules, 0)),
				"RULES=%s", rules, "INCIDENT_PATH=%s", path, "TRIGGERS=%zu",
				json_object_array_length(p->triggers) + (size_t)p->unlisted,
				"WINDOW_START=%s", fr_format_rfc3339(p->span.start, ws, sizeof(ws)),
				"WINDOW_END=%s", fr_format_rfc3339(p->span.end, we, sizeof(we)),
				"WINDOW_START_NS=%" PRIu64, p->span.start, "WINDOW_END_NS=%" PRIu64, p->span.end,
				"TRIGGER_TIME=%s", fr_format_rfc3339(p->span.trigger, tt, sizeof(tt)),
				"BYTES=%" PRId64, bytes, "REASON=%s", p->reason ? p->reason : "", NULL);
		enforce_budget(t);
		if (p->exec && access(path, F_OK) == 0)
			run_action(t, p, path);
	}
	json_object_put(meta);
}

static void remove_pending(struct fr_triggers *t, struct pending *p)
{
	for (unsigned i = 0; i < t->npending; i++)
		if (t->pending[i] == p) {
			t->pending[i] = t->pending[--t->npending];
			break;
		}
	pending_free(p);
}

static int on_window_done(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct pending *p = userdata;
	struct fr_triggers *t = p->owner;

	finalize(t, p);
	remove_pending(t, p);
	return 0;
}

void fr_triggers_flush_pending(struct fr_triggers *t)
{
	fr_spare_stop(t->spare);
	while (t->npending) {
		struct pending *p = t->pending[0];
		finalize(t, p);
		remove_pending(t, p);
	}
}

struct json_object *fr_triggers_freeze(struct fr_triggers *t, const char *reason, uint32_t pid)
{
	static const struct fr_rule builtin = { .name = (char *)"manual", .condition = FR_COND_MANUAL, .pid = -1,
						.before_ns = 60 * NSEC_PER_SEC, .after_ns = 10 * NSEC_PER_SEC,
						.max_per_hour = 60, .max_extend_ns = FR_RULE_EXTEND_AFTER };
	struct fr_record rec = { .type = FR_REC_MARK, .ts = fr_now_ns(CLOCK_BOOTTIME), .pid = pid, .tid = pid };
	struct json_object *o = json_object_new_object();
	struct pending *p;
	char buf[64], path[PATH_MAX];
	size_t ri = SIZE_MAX;

	for (size_t i = 0; i < t->rules.n; i++)
		if (t->rules.v[i].condition == FR_COND_MANUAL) {
			ri = i;
			break;
		}
	if (ri == SIZE_MAX) {
		/* no manual rule configured: freezing must still work */
		struct fr_rules one = { .v = (struct fr_rule *)&builtin, .n = 1,
					.incidents_size = t->incidents_size, .incidents_max = t->incidents_max };
		struct fr_rules all = { .incidents_size = t->incidents_size, .incidents_max = t->incidents_max };
		all.v = calloc(t->rules.n + 2, sizeof(*all.v));
		if (!all.v)
			return NULL;
		memcpy(all.v, t->rules.v, t->rules.n * sizeof(*all.v));
		all.v[t->rules.n] = one.v[0];
		all.n = t->rules.n + 1;
		if (fr_triggers_set_rules(t, &all) < 0) {
			free(all.v);
			return NULL;
		}
		free(all.v);
		ri = t->rules.n - 1;
	}
	snprintf(buf, sizeof(buf), "freeze");
	rec.mark.text = reason && *reason ? reason : buf;
	rec.mark.text_len = (uint32_t)strlen(rec.mark.text);
	p = fire(t, ri, &(struct cause){ .rec = &rec }, reason && *reason ? reason : NULL);
	if (!p) {
		json_object_object_add(o, "error", json_object_new_string("suppressed by the manual rule's cooldown or hourly limit"));
		return o;
	}
	snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);
	json_object_object_add(o, "incident", json_object_new_string(p->id));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "end", json_object_new_string(fr_format_rfc3339(p->span.end, buf, sizeof(buf))));
	return o;
}

struct json_object *fr_triggers_status(struct fr_triggers *t)
{
	struct json_object *o = json_object_new_object(), *rules = json_object_new_object();

	for (size_t i = 0; i < t->rules.n; i++) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "condition", json_object_new_string(fr_rule_condition_name(t->rules.v[i].condition)));
		json_object_object_add(r, "fired", json_object_new_uint64(t->gov.v[i].fired));
		json_object_object_add(r, "joined", json_object_new_uint64(t->gov.v[i].joined));
		json_object_object_add(r, "suppressed", json_object_new_uint64(t->gov.v[i].suppressed));
		if (t->watch[i])
			json_object_object_add(r, "watch", fr_pressure_status(t->watch[i]));
		json_object_object_add(rules, t->rules.v[i].name, r);
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "open", json_object_new_int((int)t->npending));
	json_object_object_add(o, "written", json_object_new_uint64(t->written));
	json_object_object_add(o, "failed", json_object_new_uint64(t->failed));
	json_object_object_add(o, "not_renamed", json_object_new_uint64(t->not_renamed));
	json_object_object_add(o, "spare", fr_spare_status(t->spare));
	return o;
}
