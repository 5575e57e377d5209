/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "conf-error.h"
#include "macro.h"
#include "parse.h"
#include "record.h"
#include "syscall-names.h"

/* Bounds of a latency rule's threshold: below the sources' own minimum
 * (1us) it would be 0, "no threshold"; an hour holds any wait worth
 * freezing. */
#define THRESHOLD_MIN NSEC_PER_USEC
#define THRESHOLD_MAX (3600 * NSEC_PER_SEC)
/* A pressure rule's window: the kernel's PSI triggers take 500ms to 10s
 * (Documentation/accounting/psi.rst); longer ones are read every second
 * (daemon/pressure.c), so they stay above a second. */
#define PRESSURE_OVER_MIN (NSEC_PER_SEC / 2)
#define PRESSURE_OVER_MAX (3600 * NSEC_PER_SEC)

static const char *const pressure_resources[] = {
	[FR_PRESSURE_MEMORY] = "memory",
	[FR_PRESSURE_IO] = "io",
	[FR_PRESSURE_CPU] = "cpu",
};

const char *fr_pressure_resource_name(unsigned resource)
{
	return resource < ELEMENTSOF(pressure_resources) ? pressure_resources[resource] : NULL;
}

/* --- latency: a record with a duration at least the threshold --- */

static const char *const latency_settings[] = { "threshold", NULL };
static const char *const call_settings[] = { "threshold", "syscalls", NULL };

static int parse_threshold(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r)
{
	return fr_conf_duration(x, s, THRESHOLD_MIN, THRESHOLD_MAX, &r->threshold_ns);
}

/* syscalls = [ "fsync", ... ]: of syscall records, and of offcpu records,
 * which say which call a thread was blocked in */
static int parse_calls(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r)
{
	if (strcmp(config_setting_name(s), "syscalls") != 0)
		return parse_threshold(x, s, r);
	r->any_syscall = false;
	return fr_conf_syscalls(x, s, true, r->syscalls, FR_RULE_SYSCALL_WORDS);
}

static int check_threshold(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r)
{
	if (!r->threshold_ns)
		return fr_conf_fail(x, g, "rule '%s': a latency condition needs a 'threshold'", r->name);
	return 0;
}

/* Is @nr among the rule's syscalls?  (An offcpu record outside any call
 * has -1: it matches only a rule without a syscalls filter.) */
static bool syscall_selected(const struct fr_rule *r, int64_t nr)
{
	if (r->any_syscall)
		return true;
	return nr >= 0 && nr < FR_RULE_SYSCALL_WORDS * 64 && ((r->syscalls[nr / 64] >> (nr % 64)) & 1);
}

static bool syscall_match(const struct fr_rule *r, const struct fr_record *rec)
{
	return rec->syscall.duration_ns >= r->threshold_ns && syscall_selected(r, rec->syscall.nr);
}

static bool block_match(const struct fr_rule *r, const struct fr_record *rec)
{
	return rec->block.duration_ns >= r->threshold_ns;
}

static bool runq_match(const struct fr_rule *r, const struct fr_record *rec)
{
	return rec->sched.duration_ns >= r->threshold_ns;
}

static bool offcpu_match(const struct fr_rule *r, const struct fr_record *rec)
{
	return rec->sched.duration_ns >= r->threshold_ns && syscall_selected(r, rec->sched.syscall_nr);
}

/* --- oom: every OOM kill --- */

static bool any_record(const struct fr_rule *r, const struct fr_record *rec)
{
	(void)r;
	(void)rec;
	return true;
}

/* --- signal: a signal record of the rule's signals --- */

static const char *const signal_settings[] = { "signals", NULL };

static int signal_parse(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r)
{
	return fr_conf_signals(x, s, true, &r->signals);
}
static int signal_check(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r)
{
	(void)x;
	(void)g;
	if (!r->signals)
		r->signals = (1ULL << SIGSEGV) | (1ULL << SIGBUS) | (1ULL << SIGILL) | (1ULL << SIGFPE) |
			     (1ULL << SIGABRT) | (1ULL << SIGSYS);
	return 0;
}
static bool signal_match(const struct fr_rule *r, const struct fr_record *rec)
{
	return rec->signal.sig < 64 && ((r->signals >> rec->signal.sig) & 1);
}

/* --- pressure: PSI stall of a resource, system-wide or of a cgroup --- */

static const char *const pressure_settings[] = { "resource", "kind", "threshold", "over", "cgroup", NULL };

static int pressure_parse(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r)
{
	const char *n = config_setting_name(s), *v = config_setting_get_string(s);

	if (!strcmp(n, "resource")) {
		for (unsigned k = 0; k < ELEMENTSOF(pressure_resources); k++)
			if (v && !strcmp(v, pressure_resources[k])) {
				r->pressure.resource = (uint8_t)k;
				return 0;
			}
		return fr_conf_fail(x, s, "'resource' must be \"memory\", \"io\" or \"cpu\"");
	}
	if (!strcmp(n, "kind")) {
		if (!v || (strcmp(v, "some") && strcmp(v, "full")))
			return fr_conf_fail(x, s, "'kind' must be \"some\" (a task stalled) or \"full\" (all of them)");
		r->pressure.full = !strcmp(v, "full");
		return 0;
	}
	if (!strcmp(n, "threshold")) {
		char *end;
		double pct = v ? strtod(v, &end) : -1;

		/* "20%": a share of the window, stalled */
		if (!v || pct < 0 || end == v || strcmp(end, "%") != 0 || !(pct > 0 && pct <= 100))
			return fr_conf_fail(x, s, "a pressure 'threshold' is a share of 'over' such as \"20%%\", above 0%% and at most 100%%");
		r->pressure.ppm = (uint32_t)(pct * 10000 + 0.5);
		if (!r->pressure.ppm)
			r->pressure.ppm = 1;
		return 0;
	}
	if (!strcmp(n, "over"))
		return fr_conf_duration(x, s, PRESSURE_OVER_MIN, PRESSURE_OVER_MAX, &r->pressure.over_ns);
	if (!strcmp(n, "cgroup")) {
		/* the cgroup watched, not a filter: its path below the cgroup2
		 * mount, as records show it */
		if (config_setting_type(s) != CONFIG_TYPE_STRING || v[0] != '/' || strstr(v, "/.") || strstr(v, "//"))
			return fr_conf_fail(x, s, "a pressure 'cgroup' is a cgroup's path below the cgroup2 mount, such as \"/system.slice/postgresql.service\"");
		free(r->cgroup);
		r->cgroup = strdup(v);
		return r->cgroup ? 0 : -ENOMEM;
	}
	return -EINVAL; /* not one of pressure_settings */
}
static int pressure_check(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r)
{
	if (!r->pressure.ppm)
		return fr_conf_fail(x, g, "rule '%s': a pressure condition needs a 'threshold' such as \"20%%\"", r->name);
	if (!r->pressure.over_ns)
		r->pressure.over_ns = 10 * NSEC_PER_SEC;
	return 0;
}

/* --- manual: frctl freeze --- */

/* A rule's signals join sources.signal.signals: they are recorded even
 * when that list does not name them. */
const struct fr_condition fr_conditions[FR_COND__MAX] = {
	[FR_COND_SYSCALL] = { "syscall_latency", FR_REC_SYSCALL, true, call_settings, parse_calls, check_threshold,
			      { "sources.syscall.enabled" }, "sources.syscall.threshold", syscall_match },
	[FR_COND_BLOCK] = { "block_latency", FR_REC_BLOCK, true, latency_settings, parse_threshold, check_threshold,
			    { "sources.block.enabled" }, "sources.block.threshold", block_match },
	[FR_COND_RUNQ] = { "runq_latency", FR_REC_RUNQ, true, latency_settings, parse_threshold, check_threshold,
			   { "sources.sched.enabled", "sources.sched.runq" }, "sources.sched.runq_threshold", runq_match },
	[FR_COND_OFFCPU] = { "offcpu_latency", FR_REC_OFFCPU, true, call_settings, parse_calls, check_threshold,
			     { "sources.sched.enabled", "sources.sched.offcpu" }, "sources.sched.offcpu_threshold",
			     offcpu_match },
	[FR_COND_OOM] = { "oom", FR_REC_OOM, true, NULL, NULL, NULL, { "sources.oom.enabled" }, NULL, any_record },
	[FR_COND_SIGNAL] = { "signal", FR_REC_SIGNAL, true, signal_settings, signal_parse, signal_check,
			     { "sources.signal.enabled" }, "sources.signal.signals", signal_match },
	/* fired by its watcher (daemon/pressure.c); its cgroup is the one
	 * watched, so comm and pid have no records to filter */
	[FR_COND_PRESSURE] = { "pressure", 0, false, pressure_settings, pressure_parse, pressure_check, {}, NULL, NULL },
	/* comm, pid and cgroup are taken, and have no effect */
	[FR_COND_MANUAL] = { "manual", 0, true, NULL, NULL, NULL, {}, NULL, NULL },
};
