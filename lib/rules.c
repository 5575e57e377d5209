/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libconfig.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-error.h"
#include "macro.h"
#include "parse.h"
#include "rules.h"
#include "syscall-names.h"

/* Bounds of a rule's durations.  A threshold below the sources' own
 * minimum (1us) would be 0: "no threshold".  An action must get time to
 * start at all (exec_timeout = "0s" killed it at once).  One hour holds
 * any window worth freezing; a day of cooldown is "once a day". */
#define RULE_THRESHOLD_MIN NSEC_PER_USEC
#define RULE_EXEC_TIMEOUT_MIN NSEC_PER_SEC
#define RULE_DURATION_MAX (3600 * NSEC_PER_SEC)
#define RULE_COOLDOWN_MAX (86400 * NSEC_PER_SEC)

static const char *const cond_names[FR_COND__MAX] = {
	[FR_COND_SYSCALL] = "syscall_latency",
	[FR_COND_BLOCK] = "block_latency",
	[FR_COND_RUNQ] = "runq_latency",
	[FR_COND_OFFCPU] = "offcpu_latency",
	[FR_COND_OOM] = "oom",
	[FR_COND_SIGNAL] = "signal",
	[FR_COND_MANUAL] = "manual",
};

const char *fr_rule_condition_name(enum fr_rule_condition c)
{
	return c < FR_COND__MAX ? cond_names[c] : "unknown";
}

void fr_rule_done(struct fr_rule *r)
{
	free(r->name);
	free(r->comm);
	free(r->cgroup);
	if (r->exec)
		for (char **a = r->exec; *a; a++)
			free(*a);
	free(r->exec);
}

void fr_rules_done(struct fr_rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		fr_rule_done(&r->v[i]);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}


/* Is @s an integer in [@lo, @hi]?  Then *@v is it, as written (see
 * fr_conf_int()). */
static bool get_int(const struct fr_conf_ctx *x, const config_setting_t *s, long long lo, long long hi, long long *v)
{
	if (config_setting_type(s) != CONFIG_TYPE_INT)
		return false;
	*v = fr_conf_int(x, s);
	return *v >= lo && *v <= hi;
}

/* A duration in [@min, @max], worded as the setting table words it. */
static int get_duration(const struct fr_conf_ctx *x, const config_setting_t *s, uint64_t min, uint64_t max,
			uint64_t *ret)
{
	const char *str;
	char a[32], b[32];
	uint64_t v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return fr_conf_fail(x, s, "'%s' must be a duration string such as \"10s\"", config_setting_name(s));
	str = config_setting_get_string(s);
	if (fr_parse_duration(str, &v) < 0)
		return fr_conf_fail(x, s, "'%s': invalid duration \"%s\"", config_setting_name(s), str);
	if (v < min || v > max)
		return fr_conf_fail(x, s, "'%s' = \"%s\" is out of range [%s, %s]", config_setting_name(s), str,
				    fr_format_duration(min, a, sizeof(a)), fr_format_duration(max, b, sizeof(b)));
	*ret = v;
	return 0;
}

static int get_string(const struct fr_conf_ctx *x, const config_setting_t *s, char **ret)
{
	if (config_setting_type(s) != CONFIG_TYPE_STRING || !*config_setting_get_string(s))
		return fr_conf_fail(x, s, "'%s' must be a non-empty string", config_setting_name(s));
	free(*ret);
	*ret = strdup(config_setting_get_string(s));
	return *ret ? 0 : -ENOMEM;
}

static int signal_number(const char *name)
{
	for (int k = 1; k < 64; k++) {
		const char *ab = sigabbrev_np(k);
		if (ab && strncmp(name, "SIG", 3) == 0 && strcmp(name + 3, ab) == 0)
			return k;
	}
	return -1;
}

static int parse_rule(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r)
{
	const config_setting_t *cond = config_setting_get_member(g, "condition");
	int k;

	*r = (struct fr_rule){ .pid = -1, .any_syscall = true, .before_ns = 60 * NSEC_PER_SEC,
			       .after_ns = 10 * NSEC_PER_SEC, .max_per_hour = 60, .max_extend_ns = FR_RULE_EXTEND_AFTER,
			       .exec_timeout_ns = 60 * NSEC_PER_SEC, .line = config_setting_source_line(g) };
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fr_conf_fail(x, g, "each rule must be a group { name = ...; condition = ...; }");
	if (!config_setting_get_member(g, "name"))
		return fr_conf_fail(x, g, "rule without a 'name'");
	if (!cond)
		return fr_conf_fail(x, g, "rule without a 'condition' (%s, %s, %s, %s, %s, %s or %s)", cond_names[0],
			    cond_names[1], cond_names[2], cond_names[3], cond_names[4], cond_names[5], cond_names[6]);
	if (config_setting_type(cond) != CONFIG_TYPE_STRING)
		return fr_conf_fail(x, cond, "'condition' must be a string");
	r->condition = FR_COND__MAX;
	for (int c = 0; c < FR_COND__MAX; c++)
		if (strcmp(config_setting_get_string(cond), cond_names[c]) == 0)
			r->condition = c;
	if (r->condition == FR_COND__MAX)
		return fr_conf_fail(x, cond, "unknown condition \"%s\"", config_setting_get_string(cond));

	for (int i = 0; i < config_setting_length(g); i++) {
		config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const char *n = config_setting_name(s);

		if (!strcmp(n, "condition"))
			continue;
		else if (!strcmp(n, "name"))
			k = get_string(x, s, &r->name);
		else if (!strcmp(n, "threshold")) {
			if (r->condition > FR_COND_OFFCPU)
				return fr_conf_fail(x, s, "'threshold' applies to latency conditions only");
			k = get_duration(x, s, RULE_THRESHOLD_MIN, RULE_DURATION_MAX, &r->threshold_ns);
		} else if (!strcmp(n, "comm"))
			k = get_string(x, s, &r->comm);
		else if (!strcmp(n, "cgroup"))
			k = get_string(x, s, &r->cgroup);
		else if (!strcmp(n, "pid")) {
			long long v;

			if (!get_int(x, s, 1, INT32_MAX, &v))
				return fr_conf_fail(x, s, "'pid' must be a positive integer");
			r->pid = v;
			k = 0;
		} else if (!strcmp(n, "syscalls")) {
			/* offcpu records say which call a thread was blocked in */
			if (r->condition != FR_COND_SYSCALL && r->condition != FR_COND_OFFCPU)
				return fr_conf_fail(x, s, "'syscalls' applies to syscall_latency and offcpu_latency only");
			if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) == 0)
				return fr_conf_fail(x, s, "'syscalls' must be a non-empty array of syscall names");
			r->any_syscall = false;
			for (int e = 0; e < config_setting_length(s); e++) {
				config_setting_t *el = config_setting_get_elem(s, (unsigned)e);
				int nr = config_setting_type(el) == CONFIG_TYPE_STRING ?
						 fr_syscall_number(config_setting_get_string(el)) : -1;
				if (nr < 0 || nr >= FR_RULE_SYSCALL_WORDS * 64)
					return fr_conf_fail(x, el, "'syscalls': unknown system call");
				r->syscalls[nr / 64] |= 1ULL << (nr % 64);
			}
			k = 0;
		} else if (!strcmp(n, "signals")) {
			if (r->condition != FR_COND_SIGNAL)
				return fr_conf_fail(x, s, "'signals' applies to the signal condition only");
			if (config_setting_type(s) != CONFIG_TYPE_ARRAY || config_setting_length(s) == 0)
				return fr_conf_fail(x, s, "'signals' must be a non-empty array of signal names");
			for (int e = 0; e < config_setting_length(s); e++) {
				config_setting_t *el = config_setting_get_elem(s, (unsigned)e);
				int sig = config_setting_type(el) == CONFIG_TYPE_STRING ?
						  signal_number(config_setting_get_string(el)) : -1;
				if (sig < 0)
					return fr_conf_fail(x, el, "'signals': unknown signal (names such as \"SIGSEGV\")");
				r->signals |= 1ULL << sig;
			}
			k = 0;
		} else if (!strcmp(n, "before"))
			k = get_duration(x, s, 0, RULE_DURATION_MAX, &r->before_ns);
		else if (!strcmp(n, "after"))
			k = get_duration(x, s, 0, RULE_DURATION_MAX, &r->after_ns);
		else if (!strcmp(n, "cooldown"))
			k = get_duration(x, s, 0, RULE_COOLDOWN_MAX, &r->cooldown_ns);
		else if (!strcmp(n, "max_extend"))
			k = get_duration(x, s, 0, RULE_DURATION_MAX, &r->max_extend_ns);
		else if (!strcmp(n, "exec_timeout"))
			k = get_duration(x, s, RULE_EXEC_TIMEOUT_MIN, RULE_DURATION_MAX, &r->exec_timeout_ns);
		else if (!strcmp(n, "max_per_hour")) {
			long long v;

			if (!get_int(x, s, 1, 3600, &v))
				return fr_conf_fail(x, s, "'max_per_hour' must be an integer from 1 to 3600");
			r->max_per_hour = (uint32_t)v;
			k = 0;
		} else if (!strcmp(n, "exec")) {
			int len = config_setting_length(s);
			if (config_setting_type(s) != CONFIG_TYPE_ARRAY || len == 0)
				return fr_conf_fail(x, s, "'exec' must be a non-empty array: [ \"/path/to/program\", \"arg\", ... ]");
			r->exec = calloc((size_t)len + 1, sizeof(char *));
			if (!r->exec)
				return -ENOMEM;
			for (int e = 0; e < len; e++) {
				config_setting_t *el = config_setting_get_elem(s, (unsigned)e);
				if (config_setting_type(el) != CONFIG_TYPE_STRING)
					return fr_conf_fail(x, el, "'exec' must contain strings");
				r->exec[e] = strdup(config_setting_get_string(el));
				if (!r->exec[e])
					return -ENOMEM;
			}
			if (r->exec[0][0] != '/')
				return fr_conf_fail(x, s, "'exec': the program must be an absolute path (no shell, no PATH search)");
			k = 0;
		} else
			return fr_conf_fail(x, s, "unknown setting '%s' in a rule", n);
		if (k < 0)
			return k;
	}
	/* names go into incident ids and file names */
	if (strlen(r->name) > 64 || strspn(r->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
					    strlen(r->name) || r->name[0] == '.')
		return fr_conf_fail(x, config_setting_get_member(g, "name"),
			    "rule name \"%s\": use at most 64 letters, digits, '_', '-' and '.' (not first)", r->name);
	if (r->condition <= FR_COND_OFFCPU && !r->threshold_ns)
		return fr_conf_fail(x, g, "rule '%s': a latency condition needs a 'threshold'", r->name);
	if (r->condition == FR_COND_SIGNAL && !r->signals)
		r->signals = (1ULL << SIGSEGV) | (1ULL << SIGBUS) | (1ULL << SIGILL) | (1ULL << SIGFPE) |
			     (1ULL << SIGABRT) | (1ULL << SIGSYS);
	/* frctl freeze falls back to a built-in rule named "manual" */
	if (!strcmp(r->name, "manual") && r->condition != FR_COND_MANUAL)
		return fr_conf_fail(x, config_setting_get_member(g, "name"),
			    "rule name \"manual\" is reserved for the rule of frctl freeze: use it with condition = \"manual\" only");
	return 0;
}

int fr_rules_parse(struct fr_rules *rules, const config_setting_t *list, const char *file, char *err,
		   size_t errlen)
{
	struct fr_conf_ctx x = { .file = file, .err = err, .errlen = errlen };
	int n = config_setting_length(list), k;

	if (config_setting_type(list) != CONFIG_TYPE_LIST)
		return fr_conf_fail(&x, list, "'rules' must be a list: ( { ... }, { ... } )");
	/* every record is matched against every rule: the bound keeps that
	 * cheap on the hot path (and a list of thousands is a generator's bug) */
	if (n > FR_RULES_MAX)
		return fr_conf_fail(&x, list, "'rules': %d rules, at most %d are allowed", n, FR_RULES_MAX);
	fr_rules_done(rules);
	rules->v = calloc((size_t)n + 1, sizeof(*rules->v));
	if (!rules->v)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
		k = parse_rule(&x, g, &rules->v[i]);
		rules->n = (size_t)i + 1;
		if (k < 0)
			return k;
		for (int j = 0; j < i; j++) {
			if (!strcmp(rules->v[j].name, rules->v[i].name))
				return fr_conf_fail(&x, g, "a rule named '%s' exists already (line %d)", rules->v[i].name,
					    rules->v[j].line);
			/* frctl freeze fires the first; a second would never fire */
			if (rules->v[i].condition == FR_COND_MANUAL && rules->v[j].condition == FR_COND_MANUAL)
				return fr_conf_fail(&x, g, "rule '%s': only one rule may have condition \"manual\" ('%s', line %d)",
					    rules->v[i].name, rules->v[j].name, rules->v[j].line);
		}
	}
	return 0;
}

/* Kept equal to the rules conf/flightrec.conf ships, where the reasons
 * for each value are written (test-conf checks that they are equal). */
const char fr_rules_default_text[] =
	"rules = (\n"
	"  { name = \"oom\"; condition = \"oom\"; before = \"60s\"; after = \"10s\";\n"
	"    cooldown = \"5min\"; max_per_hour = 6; },\n"
	"  { name = \"crash\"; condition = \"signal\";\n"
	"    signals = [ \"SIGSEGV\", \"SIGBUS\", \"SIGILL\", \"SIGFPE\", \"SIGABRT\", \"SIGSYS\" ];\n"
	"    before = \"60s\"; after = \"10s\"; cooldown = \"1min\"; max_per_hour = 6; },\n"
	"  { name = \"manual\"; condition = \"manual\"; before = \"5min\"; after = \"30s\"; }\n"
	");\n";

int fr_rules_defaults(struct fr_rules *r)
{
	config_t cfg;
	char err[256];
	int k = -EINVAL;

	config_init(&cfg);
	if (config_read_string(&cfg, fr_rules_default_text))
		k = fr_rules_parse(r, config_lookup(&cfg, "rules"), "(built-in rules)", err, sizeof(err));
	config_destroy(&cfg);
	return k;
}
