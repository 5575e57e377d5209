/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every setting is declared once in a table (group, name, type, bounds,
 * target); the loader walks the file and rejects what the table does not
 * know, so a typo is an error with its line, not a silently ignored key.
 */
#include <assert.h>
#include <errno.h>
#include <libconfig.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "conf.h"
#include "conf-error.h"
#include "macro.h"
#include "str-append.h"
#include "parse.h"
#include "syscall-names.h"

/* Calls that block by design; timing them would flood the store with idle
 * waits.  Overridable with sources.syscall.exclude. */
static const char *const default_exclude[] = {
	"poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"nanosleep", "clock_nanosleep", "futex", "futex_waitv", "wait4", "waitid", "pause",
	"rt_sigsuspend", "rt_sigtimedwait", "accept", "accept4", "io_getevents",
	"io_pgetevents", "io_uring_enter", "msgrcv", "semop", "semtimedop",
	"mq_timedreceive", "restart_syscall",
};

/* K_STRING_OPT: a string where "" means off (NULL) */
/* K_SIZE_AUTO: a size, or "auto" (0) */
enum kind { K_BOOL, K_INT, K_SIZE, K_SIZE_AUTO, K_DURATION, K_STRING, K_STRING_OPT, K_SYSCALLS, K_SIGNALS, K_RULES };

struct setting {
	const char *group; /* dotted path of the parent group */
	const char *name;
	enum kind kind;
	uint64_t min, max;
	size_t offset;
};

#define OFF(f) offsetof(struct fr_conf, f)
static const struct setting settings[] = {
	{ "store", "path", K_STRING, 0, 0, OFF(store_path) },
	{ "store", "size", K_SIZE_AUTO, 1ULL << 20, 1ULL << 42, OFF(store_size) },
	{ "store", "segments", K_INT, 2, 1024, OFF(store_segments) },
	{ "store", "sync_interval", K_DURATION, 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC, OFF(sync_interval_ns) },
	{ "store", "keyframe_interval", K_DURATION, NSEC_PER_SEC, 600 * NSEC_PER_SEC, OFF(keyframe_interval_ns) },
	{ "recorder", "ring_size", K_SIZE, 4096, 1ULL << 30, OFF(ring_size) },
	{ "recorder", "chunk_size", K_SIZE, 4096, 16ULL << 20, OFF(chunk_size) },
	{ "recorder", "chunk_age", K_DURATION, 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC, OFF(chunk_age_ns) },
	{ "recorder", "drain_interval", K_DURATION, NSEC_PER_MSEC, 10 * NSEC_PER_SEC, OFF(drain_interval_ns) },
	{ "recorder", "drain_cpu", K_INT, 1, 100, OFF(drain_cpu_percent) },
	{ "recorder", "zstd_level", K_INT, 1, 19, OFF(zstd_level) },
	{ "sources.proc", "enabled", K_BOOL, 0, 1, OFF(proc_enabled) },
	{ "sources.syscall", "enabled", K_BOOL, 0, 1, OFF(syscall_enabled) },
	{ "sources.syscall", "threshold", K_DURATION, NSEC_PER_USEC, 3600 * NSEC_PER_SEC, OFF(syscall_threshold_ns) },
	{ "sources.syscall", "exclude", K_SYSCALLS, 0, 0, OFF(syscall_exclude) },
	{ "sources.sched", "enabled", K_BOOL, 0, 1, OFF(sched_enabled) },
	{ "sources.sched", "offcpu", K_BOOL, 0, 1, OFF(offcpu_enabled) },
	{ "sources.sched", "offcpu_threshold", K_DURATION, NSEC_PER_USEC, 3600 * NSEC_PER_SEC, OFF(offcpu_threshold_ns) },
	{ "sources.sched", "offcpu_stacks", K_BOOL, 0, 1, OFF(offcpu_stacks) },
	{ "sources.sched", "wakers", K_BOOL, 0, 1, OFF(wakers) },
	{ "sources.sched", "runq", K_BOOL, 0, 1, OFF(runq_enabled) },
	{ "sources.sched", "runq_threshold", K_DURATION, NSEC_PER_USEC, 3600 * NSEC_PER_SEC, OFF(runq_threshold_ns) },
	{ "sources.sched", "full", K_BOOL, 0, 1, OFF(sched_full) },
	{ "sources.block", "enabled", K_BOOL, 0, 1, OFF(block_enabled) },
	{ "sources.block", "threshold", K_DURATION, 0, 3600 * NSEC_PER_SEC, OFF(block_threshold_ns) },
	{ "sources.oom", "enabled", K_BOOL, 0, 1, OFF(oom_enabled) },
	{ "sources.signal", "enabled", K_BOOL, 0, 1, OFF(signal_enabled) },
	{ "sources.signal", "signals", K_SIGNALS, 0, 0, OFF(signal_mask) },
	{ "sources.tcp", "enabled", K_BOOL, 0, 1, OFF(tcp_enabled) },
	{ "sources.sample", "enabled", K_BOOL, 0, 1, OFF(sample_enabled) },
	{ "sources.sample", "hz", K_INT, 1, 1000, OFF(sample_hz) },
	{ "sources.sample", "debug_dir", K_STRING, 0, 0, OFF(debug_dir) },
	{ "sources.sample", "parse_timeout", K_DURATION, 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC, OFF(parse_timeout_ns) },
	{ "sources.sample", "parse_cpu", K_INT, 1, 100, OFF(parse_cpu_percent) },
	{ "sources.sample", "parse_memory", K_SIZE, 1ULL << 20, 256ULL << 20, OFF(parse_memory) },
	{ "metrics", "enabled", K_BOOL, 0, 1, OFF(metrics_enabled) },
	{ "metrics", "interval", K_DURATION, 100 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC, OFF(metrics_interval_ns) },
	{ "metrics", "top_interval", K_DURATION, NSEC_PER_SEC, 3600 * NSEC_PER_SEC, OFF(metrics_top_interval_ns) },
	{ "metrics", "top", K_INT, 0, 100, OFF(metrics_top) },
	{ "control", "socket", K_STRING, 0, 0, OFF(socket_path) },
	{ "control", "group", K_STRING, 0, 0, OFF(control_group) },
	{ "prometheus", "textfile", K_STRING_OPT, 0, 0, OFF(textfile) },
	{ "prometheus", "interval", K_DURATION, NSEC_PER_SEC, 3600 * NSEC_PER_SEC, OFF(textfile_interval_ns) },
	{ "upload", "url", K_STRING_OPT, 0, 0, OFF(upload_url) },
	{ "upload", "queue", K_INT, 1, 10000, OFF(upload_queue) },
	{ "upload", "timeout", K_DURATION, NSEC_PER_SEC, 3600 * NSEC_PER_SEC, OFF(upload_timeout_ns) },
	{ "upload", "netrc", K_STRING_OPT, 0, 0, OFF(upload_netrc) },
	{ "redact", "args", K_BOOL, 0, 1, OFF(redact_args) },
	{ "redact", "home", K_BOOL, 0, 1, OFF(redact_home) },
	{ "redact", "tcp", K_BOOL, 0, 1, OFF(redact_tcp) },
	{ "redact", "marks", K_BOOL, 0, 1, OFF(redact_marks) },
	{ "redact", "urls", K_BOOL, 0, 1, OFF(redact_urls) },
	{ "triggers", "rules", K_RULES, 0, 0, OFF(rules) },
	{ "triggers.incidents", "size", K_SIZE, 1ULL << 20, 1ULL << 42, OFF(rules.incidents_size) },
	{ "triggers.incidents", "max", K_INT, 1, 100000, OFF(rules.incidents_max) },
};

/* Groups that may appear; anything else is unknown. */
static const char *const groups[] = { "store", "recorder", "sources", "sources.proc",
				      "sources.syscall", "sources.sched", "sources.block", "sources.oom",
				      "sources.signal", "sources.tcp", "sources.sample", "metrics", "control", "prometheus", "upload", "redact", "triggers",
				      "triggers.incidents" };

void fr_conf_init_defaults(struct fr_conf *c)
{
	*c = (struct fr_conf){
		.store_path = strdup(FR_STORE_DEFAULT_PATH),
		.store_size = 0, /* "auto" */
		.store_segments = 16,
		.sync_interval_ns = NSEC_PER_SEC,
		.keyframe_interval_ns = 30 * NSEC_PER_SEC,
		.ring_size = 1ULL << 20,
		.chunk_size = 256ULL << 10,
		.chunk_age_ns = NSEC_PER_SEC,
		.drain_interval_ns = 100 * NSEC_PER_MSEC,
		.drain_cpu_percent = FR_CONF_DRAIN_CPU_DEFAULT,
		.zstd_level = 3,
		.proc_enabled = true,
		.syscall_enabled = false, /* per-syscall hooks: see conf/flightrec.conf */
		.syscall_threshold_ns = 100 * NSEC_PER_MSEC,
		.sched_enabled = true,
		.offcpu_enabled = true,
		.offcpu_threshold_ns = NSEC_PER_SEC,
		.offcpu_stacks = true,
		.wakers = true,
		.runq_enabled = true,
		.runq_threshold_ns = 50 * NSEC_PER_MSEC,
		.block_enabled = true,
		.block_threshold_ns = 50 * NSEC_PER_MSEC,
		.oom_enabled = true,
		.signal_enabled = true,
		.signal_mask = (1ULL << SIGSEGV) | (1ULL << SIGBUS) | (1ULL << SIGILL) | (1ULL << SIGFPE) |
			       (1ULL << SIGABRT) | (1ULL << SIGKILL) | (1ULL << SIGSYS),
		.tcp_enabled = true,
		/* 49 Hz: off the common 50/100 Hz timer beats */
		.sample_enabled = true,
		.sample_hz = 49,
		.metrics_enabled = true,
		.metrics_interval_ns = NSEC_PER_SEC,
		.metrics_top_interval_ns = 10 * NSEC_PER_SEC,
		.metrics_top = 5,
		.socket_path = strdup(FR_SOCKET_DEFAULT_PATH),
		.control_group = strdup(FR_CONTROL_GROUP_DEFAULT),
		.debug_dir = strdup("/usr/lib/debug"),
		.parse_timeout_ns = 500 * NSEC_PER_MSEC,
		.parse_cpu_percent = 25,
		.parse_memory = 16ULL << 20,
		.textfile = strdup(FR_TEXTFILE_DEFAULT_PATH),
		.textfile_interval_ns = 10 * NSEC_PER_SEC,
		.upload_queue = 50,
		.upload_timeout_ns = 60 * NSEC_PER_SEC,
		.redact_args = true,
		.redact_home = true,
		.redact_tcp = true,
		.redact_marks = true,
		.redact_urls = true,
		.rules = { .incidents_size = 1ULL << 30, .incidents_max = 100 },
	};
	/* the default rules are active unless triggers.rules says otherwise
	 * (fr_conf_load) */
	if (fr_rules_defaults(&c->rules) < 0)
		abort(); /* only out of memory: the text is tested */
	for (size_t i = 0; i < ELEMENTSOF(default_exclude); i++) {
		int nr = fr_syscall_number(default_exclude[i]);
		if (nr >= 0 && nr < FR_CONF_SYSCALL_MAX)
			c->syscall_exclude[nr / 64] |= 1ULL << (nr % 64);
	}
}

void fr_conf_done(struct fr_conf *c)
{
	free(c->store_path);
	free(c->socket_path);
	free(c->control_group);
	free(c->debug_dir);
	free(c->textfile);
	free(c->upload_url);
	free(c->upload_netrc);
	fr_rules_done(&c->rules);
	c->store_path = c->socket_path = c->control_group = c->debug_dir = NULL;
	c->textfile = c->upload_url = c->upload_netrc = NULL;
}


/* "sources.syscall" for a group setting, "" for the root. */
static void setting_path(const config_setting_t *s, char *buf, size_t len)
{
	const char *chain[8];
	int n = 0;

	buf[0] = 0;
	for (; s && config_setting_name(s) && n < 8; s = config_setting_parent(s))
		chain[n++] = config_setting_name(s);
	while (n-- > 0) {
		strncat(buf, chain[n], len - strlen(buf) - 1);
		if (n)
			strncat(buf, ".", len - strlen(buf) - 1);
	}
}

static const struct setting *find_setting(const char *group, const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(settings); i++)
		if (strcmp(settings[i].group, group) == 0 && strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

static bool known_group(const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(groups); i++)
		if (strcmp(groups[i], path) == 0)
			return true;
	return false;
}

static int apply(const struct fr_conf_ctx *x, struct fr_conf *c, const struct setting *d, config_setting_t *s)
{
	void *target = (char *)c + d->offset;
	const char *name = config_setting_name(s);
	int type = config_setting_type(s);
	uint64_t v = 0;
	int r;

	switch (d->kind) {
	case K_BOOL:
		if (type != CONFIG_TYPE_BOOL)
			return fr_conf_fail(x, s, "'%s' must be true or false", name);
		*(bool *)target = config_setting_get_bool(s);
		return 0;
	case K_INT: {
		long long i;
		if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
			return fr_conf_fail(x, s, "'%s' must be an integer", name);
		i = fr_conf_int(x, s);
		if (i < (long long)d->min || i > (long long)d->max)
			return fr_conf_fail(x, s, "'%s' = %lld is out of range [%llu, %llu]", name, i,
				    (unsigned long long)d->min, (unsigned long long)d->max);
		if (d->offset == OFF(zstd_level))
			*(int *)target = (int)i;
		else
			*(uint32_t *)target = (uint32_t)i;
		return 0;
	}
	case K_SIZE:
	case K_SIZE_AUTO:
	case K_DURATION: {
		bool size = d->kind != K_DURATION;
		const char *str;
		char a[32], b[32];
		if (type != CONFIG_TYPE_STRING)
			return fr_conf_fail(x, s, "'%s' must be a string such as \"%s\"%s", name,
				    size ? "256M" : "100ms", d->kind == K_SIZE_AUTO ? " or \"auto\"" : "");
		str = config_setting_get_string(s);
		if (d->kind == K_SIZE_AUTO && strcmp(str, "auto") == 0) {
			*(uint64_t *)target = 0;
			return 0;
		}
		r = size ? fr_parse_size(str, &v) : fr_parse_duration(str, &v);
		if (r < 0)
			return fr_conf_fail(x, s, "'%s': invalid %s \"%s\"%s", name, size ? "size" : "duration", str,
				    d->kind == K_SIZE_AUTO ? " (a size such as \"1G\", or \"auto\")" : "");
		if (v < d->min || v > d->max) {
			if (size) {
				fr_format_size(d->min, a, sizeof(a));
				fr_format_size(d->max, b, sizeof(b));
			} else {
				fr_format_duration(d->min, a, sizeof(a));
				fr_format_duration(d->max, b, sizeof(b));
			}
			return fr_conf_fail(x, s, "'%s' = \"%s\" is out of range [%s, %s]", name, str, a, b);
		}
		*(uint64_t *)target = v;
		return 0;
	}
	case K_STRING:
	case K_STRING_OPT: {
		const char *str;
		char *dup = NULL;
		if (type != CONFIG_TYPE_STRING)
			return fr_conf_fail(x, s, "'%s' must be a string", name);
		str = config_setting_get_string(s);
		if (!*str && d->kind == K_STRING)
			return fr_conf_fail(x, s, "'%s' must not be empty", name);
		if (*str)
			dup = strdup(str);
		if (*str && !dup)
			return -ENOMEM;
		free(*(char **)target);
		*(char **)target = dup;
		return 0;
	}
	case K_SIGNALS:
		return fr_conf_signals(x, s, false, target);
	case K_RULES:
		return fr_rules_parse(target, s, x->file, x->err, x->errlen);
	case K_SYSCALLS:
		return fr_conf_syscalls(x, s, false, target, FR_CONF_SYSCALL_MAX / 64);
	}
	return -EINVAL;
}

static int walk(const struct fr_conf_ctx *x, struct fr_conf *c, config_setting_t *g)
{
	char path[128];
	int r;

	setting_path(g, path, sizeof(path));
	for (int i = 0; i < config_setting_length(g); i++) {
		config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *name = config_setting_name(s);
		char child[160];

		if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
			snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", name);
			if (!known_group(child))
				return fr_conf_fail(x, s, "unknown section '%s'", child);
			r = walk(x, c, s);
		} else {
			const struct setting *d = find_setting(path, name);
			if (!d)
				return fr_conf_fail(x, s, "unknown setting '%s'%s%s%s", name,
					    *path ? " in '" : "", path, *path ? "'" : "");
			r = apply(x, c, d, s);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* The setting of dotted name @path ("sources.sched.runq"), or NULL. */
static const struct setting *setting_named(const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(settings); i++) {
		size_t gl = strlen(settings[i].group);
		if (!strncmp(path, settings[i].group, gl) && path[gl] == '.' && !strcmp(path + gl + 1, settings[i].name))
			return &settings[i];
	}
	return NULL;
}

/* Whether a source the rule's condition needs is switched off: then
 * @need says what it needs.  A rule on a source that is switched off
 * would never fire, so it is an error, not a silence. */
static bool rule_source_off(const struct fr_conf *c, enum fr_rule_condition cond, char *need, size_t len)
{
	const struct fr_condition *k = fr_condition(cond);
	bool off = false;
	size_t at = 0;

	need[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(k->needs) && k->needs[i]; i++) {
		const struct setting *st = setting_named(k->needs[i]);
		assert(st && st->kind == K_BOOL);
		off |= !*(const bool *)((const char *)c + st->offset);
		fr_str_append(need, len, &at, "%s%s = true", i ? " and " : "", k->needs[i]);
	}
	return off;
}

/* Default rules (no triggers.rules) on a source the file switched off are
 * left out: the file did not ask for them. */
static void drop_default_rules_off(struct fr_conf *c)
{
	char need[256];
	size_t n = 0;

	for (size_t i = 0; i < c->rules.n; i++) {
		if (rule_source_off(c, c->rules.v[i].condition, need, sizeof(need))) {
			fr_rule_done(&c->rules.v[i]);
			continue;
		}
		c->rules.v[n++] = c->rules.v[i];
	}
	c->rules.n = n;
}

static int check_rule_sources(const struct fr_conf_ctx *x, const struct fr_conf *c, const config_setting_t *list)
{
	char need[256];

	for (size_t i = 0; list && i < c->rules.n; i++) {
		const struct fr_rule *r = &c->rules.v[i];

		if (rule_source_off(c, r->condition, need, sizeof(need)))
			return fr_conf_fail(x, config_setting_get_elem(list, (unsigned)i),
					    "rule '%s' (%s) needs %s: it would never fire", r->name,
					    fr_rule_condition_name(r->condition), need);
	}
	return 0;
}

unsigned fr_conf_lower_for_rules(struct fr_conf *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->rules.n; i++) {
		const struct fr_rule *r = &c->rules.v[i];
		const char *lowers = fr_condition(r->condition)->lowers;
		const struct setting *st = lowers ? setting_named(lowers) : NULL;
		void *v = st ? (char *)c + st->offset : NULL;

		if (!st)
			continue;
		assert(st->kind == K_DURATION || st->kind == K_SIGNALS);
		if (st->kind == K_SIGNALS)
			*(uint64_t *)v |= r->signals;
		else if (r->threshold_ns < *(uint64_t *)v) {
			*(uint64_t *)v = r->threshold_ns;
			n++;
		}
	}
	return n;
}

static int check_relations(const struct fr_conf_ctx *x, struct fr_conf *c, config_t *cfg)
{
	config_setting_t *s = config_lookup(cfg, "store.size");
	uint64_t seg = c->store_size / c->store_segments;

	/* A segment must hold a couple of the largest chunks.  Point at
	 * whichever of the three settings the file has. */
	if (!s)
		s = config_lookup(cfg, "store.segments");
	if (!s)
		s = config_lookup(cfg, "recorder.chunk_size");
	if (c->store_size && seg < 4 * c->chunk_size + 4096)
		return fr_conf_fail(x, s,
			    "store.size / store.segments (%llu bytes) must be at least 4 x recorder.chunk_size + 4K",
			    (unsigned long long)seg);
	s = config_lookup(cfg, "recorder.ring_size");
	if (c->ring_size & (c->ring_size - 1))
		return fr_conf_fail(x, s,
			    "'ring_size' must be a power of two (such as \"1M\")");
	return check_rule_sources(x, c, config_lookup(cfg, "triggers.rules"));
}

int fr_conf_load(struct fr_conf *c, const char *path, bool must_exist, char *err, size_t errlen)
{
	struct fr_conf_ctx x = { .file = path, .err = err, .errlen = errlen };
	config_t cfg;
	FILE *f;
	int r;

	f = fopen(path, "re");
	if (!f) {
		r = negative_errno();
		if (r == -ENOENT && !must_exist)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	config_init(&cfg);
	if (!config_read(&cfg, f)) {
		snprintf(err, errlen, "%s:%d: %s", path, config_error_line(&cfg), config_error_text(&cfg));
		r = -EINVAL;
		goto out;
	}
	r = walk(&x, c, config_root_setting(&cfg));
	if (r == 0 && !config_lookup(&cfg, "triggers.rules"))
		drop_default_rules_off(c);
	if (r == 0)
		r = check_relations(&x, c, &cfg);
out:
	config_destroy(&cfg);
	fclose(f);
	return r;
}
