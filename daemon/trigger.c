/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/incident.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/record-json.h"
#include "../lib/store-reader.h"
#include "../lib/window.h"
#include "log.h"
#include "trigger.h"
#include <limits.h>

/* Open incidents at once; a trigger beyond is counted as suppressed. */
#define PENDING_MAX 16

struct rule_state {
	char *name;
	uint64_t last_incident_mono; /* 0: never */
	uint64_t *hour;              /* start times of its incidents in the last hour, ring */
	uint32_t hour_n, hour_pos, hour_cap;
	uint64_t fired, joined, suppressed;
};

struct pending {
	char id[96];
	uint64_t start_wall, end_wall, trigger_wall;
	struct json_object *rules;    /* array of names */
	struct json_object *triggers; /* array of records */
	char *reason;
	char **exec;                  /* of the rule that opened it */
	uint64_t exec_timeout_ns;
	sd_event_source *timer;
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
	struct fr_rules rules;     /* copy owned here */
	struct rule_state *state;
	struct pending *pending[PENDING_MAX];
	unsigned npending;
	uint64_t incidents_size;
	uint32_t incidents_max;
	uint64_t written;
	sd_event_source *sync_soon;
};


static void rule_states_free(struct rule_state *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].name);
		free(s[i].hour);
	}
	free(s);
}

/* A deep copy of the rules that the engine owns. */
static int copy_rules(struct fr_rules *dst, const struct fr_rules *src)
{
	*dst = (struct fr_rules){ .incidents_size = src->incidents_size, .incidents_max = src->incidents_max };
	dst->v = calloc(src->n + 1, sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		const struct fr_rule *r = &src->v[i];
		struct fr_rule *d = &dst->v[i];
		*d = *r;
		d->name = strdup(r->name);
		d->comm = r->comm ? strdup(r->comm) : NULL;
		d->cgroup = r->cgroup ? strdup(r->cgroup) : NULL;
		d->exec = NULL;
		dst->n = i + 1;
		if (r->exec) {
			size_t n = 0;
			while (r->exec[n])
				n++;
			d->exec = calloc(n + 1, sizeof(char *));
			for (size_t k = 0; d->exec && k < n; k++)
				d->exec[k] = strdup(r->exec[k]);
		}
	}
	return 0;
}

int fr_triggers_set_rules(struct fr_triggers *t, const struct fr_rules *rules)
{
	struct rule_state *st = calloc(rules->n + 1, sizeof(*st));
	struct fr_rules copy;
	int k;

	if (!st)
		return -ENOMEM;
	k = copy_rules(&copy, rules);
	if (k < 0) {
		free(st);
		return k;
	}
	for (size_t i = 0; i < rules->n; i++) {
		st[i].name = strdup(rules->v[i].name);
		st[i].hour_cap = rules->v[i].max_per_hour;
		st[i].hour = calloc(st[i].hour_cap, sizeof(uint64_t));
		/* keep the governance of a rule that keeps its name */
		for (size_t j = 0; t->state && j < t->rules.n; j++)
			if (!strcmp(t->state[j].name, rules->v[i].name)) {
				st[i].last_incident_mono = t->state[j].last_incident_mono;
				st[i].fired = t->state[j].fired;
				st[i].joined = t->state[j].joined;
				st[i].suppressed = t->state[j].suppressed;
			}
	}
	rule_states_free(t->state, t->rules.n);
	fr_rules_done(&t->rules);
	t->rules = copy;
	t->state = st;
	t->incidents_size = rules->incidents_size;
	t->incidents_max = rules->incidents_max;
	return 0;
}

int fr_triggers_new(const struct fr_triggers_params *p, const struct fr_rules *rules, struct fr_triggers **ret)
{
	struct fr_triggers *t = calloc(1, sizeof(*t));
	int k;

	if (!t)
		return -ENOMEM;
	t->p = *p;
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
	*ret = t;
	return 0;
}

static void pending_free(struct pending *p)
{
	if (!p)
		return;
	sd_event_source_disable_unref(p->timer);
	json_object_put(p->rules);
	json_object_put(p->triggers);
	free(p->reason);
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
	rule_states_free(t->state, t->rules.n);
	fr_rules_done(&t->rules);
	free(t->store_dir);
	free(t->config_path);
	free(t->incidents_dir);
	free(t);
	return NULL;
}

/* The record type a condition looks at (0: none). */
static uint16_t condition_type(enum fr_rule_condition c)
{
	switch (c) {
	case FR_COND_SYSCALL:
		return FR_REC_SYSCALL;
	case FR_COND_BLOCK:
		return FR_REC_BLOCK;
	case FR_COND_RUNQ:
		return FR_REC_RUNQ;
	case FR_COND_OFFCPU:
		return FR_REC_OFFCPU;
	case FR_COND_OOM:
		return FR_REC_OOM;
	case FR_COND_SIGNAL:
		return FR_REC_SIGNAL;
	default:
		return 0;
	}
}

static bool matches(const struct fr_rule *r, const struct fr_record *rec, const char *cgroup)
{
	uint64_t d;

	if (rec->type != condition_type(r->condition))
		return false;
	switch (r->condition) {
	case FR_COND_SYSCALL:
		d = rec->syscall.duration_ns;
		if (!r->any_syscall && (rec->syscall.nr >= FR_RULE_SYSCALL_WORDS * 64 ||
					!((r->syscalls[rec->syscall.nr / 64] >> (rec->syscall.nr % 64)) & 1)))
			return false;
		break;
	case FR_COND_BLOCK:
		d = rec->block.duration_ns;
		break;
	case FR_COND_RUNQ:
	case FR_COND_OFFCPU:
		d = rec->sched.duration_ns;
		break;
	case FR_COND_SIGNAL:
		if (rec->signal.sig >= 64 || !((r->signals >> rec->signal.sig) & 1))
			return false;
		d = UINT64_MAX;
		break;
	default: /* OOM */
		d = UINT64_MAX;
		break;
	}
	if (d < r->threshold_ns)
		return false;
	if (r->pid >= 0 && rec->pid != (uint32_t)r->pid)
		return false;
	if (r->comm && fnmatch(r->comm, rec->comm, 0) != 0)
		return false;
	if (r->cgroup && (!cgroup || strncmp(cgroup, r->cgroup, strlen(r->cgroup)) != 0))
		return false;
	return true;
}

static struct json_object *record_json(struct fr_triggers *t, const struct fr_record *rec, const char *cgroup)
{
	struct fr_record_context ctx = {
		/* the record's boottime stamp, on today's wall clock */
		.wall_ns = rec->ts + (fr_now_ns(CLOCK_REALTIME) - fr_now_ns(CLOCK_BOOTTIME)),
		.boot_id = t->boot_id,
		.cgroup = cgroup,
		.cgroup_len = cgroup ? (uint32_t)strlen(cgroup) : 0,
	};
	return fr_record_to_json(rec, &ctx);
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
	t->p.flush(t->p.userdata);
	return 0;
}

static int arm(struct pending *p)
{
	uint64_t now = fr_now_ns(CLOCK_REALTIME);
	/* the window's end, plus a little for its last records to arrive */
	uint64_t wait = p->end_wall > now ? p->end_wall - now : 0;

	wait += 200 * NSEC_PER_MSEC;
	if (p->timer)
		return sd_event_source_set_time_relative(p->timer, wait / 1000);
	return sd_event_add_time_relative(p->owner->p.event, &p->timer, CLOCK_MONOTONIC, wait / 1000, 1000,
					  on_window_done, p);
}

/* The trigger record, stamped now, carries the process of the record that
 * fired the rule (@cause), so readers can tell which one it was. */
static void write_trigger_record(struct fr_triggers *t, const struct fr_rule *r, const struct pending *p,
				 const struct fr_record *cause)
{
	struct fr_record rec = { .type = FR_REC_TRIGGER, .ts = fr_now_ns(CLOCK_BOOTTIME) };

	rec.pid = cause->pid;
	rec.tid = cause->tid;
	rec.cgroup_id = cause->cgroup_id;
	memcpy(rec.comm, cause->comm, sizeof(rec.comm));
	rec.comm_len = cause->comm_len;

	rec.trigger.rule = r->name;
	rec.trigger.rule_len = (uint32_t)strlen(r->name);
	rec.trigger.incident = p->id;
	rec.trigger.incident_len = (uint32_t)strlen(p->id);
	t->p.record(&rec, t->p.userdata);
}

/* A rule fired on @rec (or on a freeze when @rec is a mark).  Returns the
 * incident it joined or opened, or NULL when governance suppressed it. */
static struct pending *fire(struct fr_triggers *t, size_t ri, const struct fr_record *rec, const char *cgroup,
			    const char *reason)
{
	const struct fr_rule *r = &t->rules.v[ri];
	struct rule_state *st = &t->state[ri];
	uint64_t wall = rec_wall(rec), mono = fr_now_ns(CLOCK_MONOTONIC);
	struct pending *p;

	/* inside an open incident's window: join it, and extend it */
	for (unsigned i = 0; i < t->npending; i++) {
		p = t->pending[i];
		if (wall < p->start_wall || wall > p->end_wall)
			continue;
		json_object_array_add(p->triggers, record_json(t, rec, cgroup));
		bool listed = false;
		for (size_t k = 0; k < json_object_array_length(p->rules); k++)
			listed |= !strcmp(json_object_get_string(json_object_array_get_idx(p->rules, k)), r->name);
		if (!listed)
			json_object_array_add(p->rules, json_object_new_string(r->name));
		if (wall + r->after_ns > p->end_wall) {
			p->end_wall = wall + r->after_ns;
			(void)arm(p);
		}
		st->joined++;
		write_trigger_record(t, r, p, rec);
		return p;
	}

	/* governance: cooldown, then the hourly budget */
	if (st->last_incident_mono && r->cooldown_ns && mono - st->last_incident_mono < r->cooldown_ns) {
		st->suppressed++;
		return NULL;
	}
	while (st->hour_n && mono - st->hour[(st->hour_pos + st->hour_cap - st->hour_n) % st->hour_cap] >
				     3600 * NSEC_PER_SEC)
		st->hour_n--;
	if (st->hour_n >= st->hour_cap || t->npending >= PENDING_MAX) {
		st->suppressed++;
		if (st->suppressed == 1 || st->suppressed % 100 == 0)
			log_warning("Rule %s: incident suppressed (at most %u an hour, or too many open); %" PRIu64 " so far.",
				    r->name, st->hour_cap, st->suppressed);
		return NULL;
	}

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->owner = t;
	p->trigger_wall = wall;
	p->start_wall = wall > r->before_ns ? wall - r->before_ns : 0;
	p->end_wall = wall + r->after_ns;
	p->rules = json_object_new_array();
	p->triggers = json_object_new_array();
	p->reason = reason ? strdup(reason) : NULL;
	p->exec_timeout_ns = r->exec_timeout_ns;
	if (r->exec) {
		size_t n = 0;
		while (r->exec[n])
			n++;
		p->exec = calloc(n + 1, sizeof(char *));
		for (size_t k = 0; p->exec && k < n; k++)
			p->exec[k] = strdup(r->exec[k]);
	}
	json_object_array_add(p->rules, json_object_new_string(r->name));
	json_object_array_add(p->triggers, record_json(t, rec, cgroup));

	/* id: trigger time and rule, unique among the files */
	time_t secs = (time_t)(wall / NSEC_PER_SEC);
	struct tm tm;
	char stamp[32], path[PATH_MAX];
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (unsigned n = 0;; n++) {
		snprintf(p->id, sizeof(p->id), n ? "%s-%s-%u" : "%s-%s", stamp, r->name, n);
		snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);
		bool taken = access(path, F_OK) == 0;
		for (unsigned i = 0; i < t->npending; i++)
			taken |= !strcmp(t->pending[i]->id, p->id);
		if (!taken)
			break;
	}
	if (arm(p) < 0) {
		pending_free(p);
		return NULL;
	}
	t->pending[t->npending++] = p;
	st->fired++;
	st->last_incident_mono = mono;
	st->hour[st->hour_pos] = mono;
	st->hour_pos = (st->hour_pos + 1) % st->hour_cap;
	st->hour_n++;
	write_trigger_record(t, r, p, rec);
	/* the moments before go to disk now, whatever happens next; deferred
	 * because we may be inside the ring buffer's callback */
	if (!t->sync_soon)
		(void)sd_event_add_defer(t->p.event, &t->sync_soon, on_sync_soon, t);
	char b[32], a[32];
	log_notice("Rule %s fired: incident %s, window -%s/+%s, written when it is complete.", r->name, p->id,
		   fr_format_duration(r->before_ns, b, sizeof(b)), fr_format_duration(r->after_ns, a, sizeof(a)));
	return p;
}

bool fr_triggers_may_match(const struct fr_triggers *t, uint16_t type)
{
	for (size_t i = 0; i < t->rules.n; i++)
		if (condition_type(t->rules.v[i].condition) == type)
			return true;
	return false;
}

void fr_triggers_on_record(struct fr_triggers *t, const struct fr_record *rec, const char *cgroup)
{
	for (size_t i = 0; i < t->rules.n; i++)
		if (matches(&t->rules.v[i], rec, cgroup))
			fire(t, i, rec, cgroup, NULL);
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

static void finalize(struct fr_triggers *t, struct pending *p)
{
	struct json_object *meta = json_object_new_object();
	struct fr_store_reader *r = NULL;
	struct fr_chunk_ref *refs = NULL;
	char path[PATH_MAX], buf[64], host[256] = "";
	struct utsname u;
	size_t nrefs = 0;
	int64_t bytes = -1;
	uint64_t t0 = fr_now_ns(CLOCK_MONOTONIC);
	int k;

	/* everything up to now (past the window's end) onto the disk first */
	t->p.flush(t->p.userdata);

	gethostname(host, sizeof(host) - 1);
	uname(&u);
	json_object_object_add(meta, "id", json_object_new_string(p->id));
	json_object_object_add(meta, "rules", json_object_get(p->rules));
	json_object_object_add(meta, "reason", p->reason ? json_object_new_string(p->reason) : NULL);
	json_object_object_add(meta, "start", json_object_new_string(fr_format_rfc3339(p->start_wall, buf, sizeof(buf))));
	json_object_object_add(meta, "end", json_object_new_string(fr_format_rfc3339(p->end_wall, buf, sizeof(buf))));
	json_object_object_add(meta, "trigger_time", json_object_new_string(fr_format_rfc3339(p->trigger_wall, buf, sizeof(buf))));
	json_object_object_add(meta, "triggers", json_object_get(p->triggers));
	json_object_object_add(meta, "host", json_object_new_string(host));
	json_object_object_add(meta, "kernel", json_object_new_string(u.release));
	json_object_object_add(meta, "boot_id", json_object_new_string(fr_format_boot_id(t->boot_id, buf, sizeof(buf))));
	char *conf = read_file(t->config_path);
	json_object_object_add(meta, "config_path", json_object_new_string(t->config_path));
	json_object_object_add(meta, "config", conf ? json_object_new_string(conf) : NULL);
	free(conf);

	snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);
	k = fr_store_reader_open(t->store_dir, &r);
	if (k >= 0) {
		struct fr_window_query q = { .since_ns = p->start_wall, .until_ns = p->end_wall };
		k = fr_window_select(r, &q, &refs, &nrefs);
	}
	if (k >= 0) {
		bytes = fr_incident_write(path, json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN), r, refs, nrefs);
		k = bytes < 0 ? (int)bytes : 0;
	}
	free(refs);
	fr_store_reader_free(r);
	if (k < 0) {
		log_error_errno(k, "Failed to write incident %s: %m", p->id);
	} else {
		const char *rules = json_object_to_json_string_ext(p->rules, JSON_C_TO_STRING_PLAIN);
		t->written++;
		log_notice("Incident %s captured: %s, %zu triggers, %" PRId64 " bytes, durable %.1f ms after its window.",
			   p->id, path, json_object_array_length(p->triggers), bytes,
			   (double)(fr_now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
		/* the entry operators alert on */
		sd_journal_send("MESSAGE=flightrec incident %s captured (rules %s): %s", p->id, rules, path,
				"MESSAGE_ID=" FR_INCIDENT_MESSAGE_ID, "PRIORITY=4", "INCIDENT=%s", p->id,
				"RULE=%s", json_object_get_string(json_object_array_get_idx(p->rules, 0)),
				"RULES=%s", rules, "INCIDENT_PATH=%s", path, "TRIGGERS=%zu",
				json_object_array_length(p->triggers), NULL);
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
						.max_per_hour = 60 };
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
	p = fire(t, ri, &rec, NULL, reason && *reason ? reason : NULL);
	if (!p) {
		json_object_object_add(o, "error", json_object_new_string("suppressed by the manual rule's cooldown or hourly limit"));
		return o;
	}
	snprintf(path, sizeof(path), "%s/%s%s", t->incidents_dir, p->id, FR_INCIDENT_SUFFIX);
	json_object_object_add(o, "incident", json_object_new_string(p->id));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "end", json_object_new_string(fr_format_rfc3339(p->end_wall, buf, sizeof(buf))));
	return o;
}

struct json_object *fr_triggers_status(struct fr_triggers *t)
{
	struct json_object *o = json_object_new_object(), *rules = json_object_new_object();

	for (size_t i = 0; i < t->rules.n; i++) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "condition", json_object_new_string(fr_rule_condition_name(t->rules.v[i].condition)));
		json_object_object_add(r, "fired", json_object_new_uint64(t->state[i].fired));
		json_object_object_add(r, "joined", json_object_new_uint64(t->state[i].joined));
		json_object_object_add(r, "suppressed", json_object_new_uint64(t->state[i].suppressed));
		json_object_object_add(rules, t->rules.v[i].name, r);
	}
	json_object_object_add(o, "rules", rules);
	json_object_object_add(o, "open", json_object_new_int((int)t->npending));
	json_object_object_add(o, "written", json_object_new_uint64(t->written));
	return o;
}

unsigned fr_triggers_adjust_thresholds(struct fr_conf *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->rules.n; i++) {
		const struct fr_rule *r = &c->rules.v[i];
		uint64_t *src = r->condition == FR_COND_SYSCALL ? &c->syscall_threshold_ns :
				r->condition == FR_COND_BLOCK ? &c->block_threshold_ns :
				r->condition == FR_COND_RUNQ ? &c->runq_threshold_ns :
				r->condition == FR_COND_OFFCPU ? &c->offcpu_threshold_ns : NULL;
		if (src && r->threshold_ns < *src) {
			*src = r->threshold_ns;
			n++;
		}
		if (r->condition == FR_COND_SIGNAL)
			c->signal_mask |= r->signals;
	}
	return n;
}
