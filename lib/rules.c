/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <libconfig.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conditions.h"
#include "conf-error.h"
#include "macro.h"
#include "parse.h"
#include "record.h"
#include "rules.h"
#include "str-append.h"

/* Bounds of a rule's durations.  An action must get time to start at
 * all (exec_timeout = "0s" killed it at once).  One hour holds any window
 * worth freezing; a day of cooldown is "once a day". */
#define RULE_EXEC_TIMEOUT_MIN NSEC_PER_SEC
#define RULE_DURATION_MAX (3600 * NSEC_PER_SEC)
#define RULE_COOLDOWN_MAX (86400 * NSEC_PER_SEC)

const char *fr_rule_condition_name(enum fr_rule_condition c)
{
	return c < FR_COND__MAX ? fr_conditions[c].name : "unknown";
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

char **fr_strv_copy(char *const *v)
{
	size_t n = 0;
	char **c;

	if (!v)
		return NULL;
	while (v[n])
		n++;
	c = calloc(n + 1, sizeof(char *));
	for (size_t k = 0; c && k < n; k++)
		if (!(c[k] = strdup(v[k]))) {
			while (k--)
				free(c[k]);
			free(c);
			return NULL;
		}
	return c;
}

int fr_rule_copy(struct fr_rule *dst, const struct fr_rule *src)
{
	*dst = *src;
	dst->name = strdup(src->name);
	dst->comm = src->comm ? strdup(src->comm) : NULL;
	dst->cgroup = src->cgroup ? strdup(src->cgroup) : NULL;
	dst->exec = fr_strv_copy(src->exec);
	if (!dst->name || (src->comm && !dst->comm) || (src->cgroup && !dst->cgroup) || (src->exec && !dst->exec)) {
		fr_rule_done(dst);
		*dst = (struct fr_rule){};
		return -ENOMEM;
	}
	return 0;
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

static int get_string(const struct fr_conf_ctx *x, const config_setting_t *s, char **ret)
{
	if (config_setting_type(s) != CONFIG_TYPE_STRING || !*config_setting_get_string(s))
		return fr_conf_fail(x, s, "'%s' must be a non-empty string", config_setting_name(s));
	free(*ret);
	*ret = strdup(config_setting_get_string(s));
	return *ret ? 0 : -ENOMEM;
}

/* Is @name one of condition @c's own settings? */
static bool takes(const struct fr_condition *c, const char *name)
{
	for (const char *const *n = c->settings; n && *n; n++)
		if (!strcmp(*n, name))
			return true;
	return false;
}

/* @s is no setting of the rule's condition: name those it belongs to. */
static int not_this_condition(const struct fr_conf_ctx *x, const config_setting_t *s)
{
	const char *name = config_setting_name(s);
	char which[256] = "";
	size_t len = 0;
	int n = 0, k = 0;

	for (int c = 0; c < FR_COND__MAX; c++)
		n += takes(&fr_conditions[c], name);
	if (!n)
		return fr_conf_fail(x, s, "unknown setting '%s' in a rule", name);
	for (int c = 0; c < FR_COND__MAX; c++)
		if (takes(&fr_conditions[c], name))
			fr_str_append(which, sizeof(which), &len, "%s%s", k++ == 0 ? "" : k == n ? " and " : ", ",
				      fr_conditions[c].name);
	return fr_conf_fail(x, s, "'%s' applies to %s only", name, which);
}

/* The setting every rule takes: name, filters, window, governance and
 * action.  1 when @s is one of them (parsed), 0 when it is not. */
static int parse_common(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r, bool filters)
{
	const char *n = config_setting_name(s);
	long long v;

	if (!strcmp(n, "name"))
		return get_string(x, s, &r->name) < 0 ? -EINVAL : 1;
	if (filters && !strcmp(n, "comm"))
		return get_string(x, s, &r->comm) < 0 ? -EINVAL : 1;
	if (filters && !strcmp(n, "cgroup"))
		return get_string(x, s, &r->cgroup) < 0 ? -EINVAL : 1;
	if (filters && !strcmp(n, "pid")) {
		if (!get_int(x, s, 1, INT32_MAX, &v))
			return fr_conf_fail(x, s, "'pid' must be a positive integer");
		r->pid = v;
		return 1;
	}
	if (!filters && (!strcmp(n, "comm") || !strcmp(n, "pid")))
		return fr_conf_fail(x, s, "'%s' filters records: condition \"%s\" fires on none", n,
				    fr_rule_condition_name(r->condition));
	if (!strcmp(n, "before"))
		return fr_conf_duration(x, s, 0, RULE_DURATION_MAX, &r->before_ns) < 0 ? -EINVAL : 1;
	if (!strcmp(n, "after"))
		return fr_conf_duration(x, s, 0, RULE_DURATION_MAX, &r->after_ns) < 0 ? -EINVAL : 1;
	if (!strcmp(n, "cooldown"))
		return fr_conf_duration(x, s, 0, RULE_COOLDOWN_MAX, &r->cooldown_ns) < 0 ? -EINVAL : 1;
	if (!strcmp(n, "max_extend"))
		return fr_conf_duration(x, s, 0, RULE_DURATION_MAX, &r->max_extend_ns) < 0 ? -EINVAL : 1;
	if (!strcmp(n, "exec_timeout"))
		return fr_conf_duration(x, s, RULE_EXEC_TIMEOUT_MIN, RULE_DURATION_MAX, &r->exec_timeout_ns) < 0 ? -EINVAL : 1;
	if (!strcmp(n, "max_per_hour")) {
		if (!get_int(x, s, 1, 3600, &v))
			return fr_conf_fail(x, s, "'max_per_hour' must be an integer from 1 to 3600");
		r->max_per_hour = (uint32_t)v;
		return 1;
	}
	if (!strcmp(n, "exec")) {
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
		return 1;
	}
	return 0;
}

static int parse_rule(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r)
{
	const config_setting_t *cond = config_setting_get_member(g, "condition");
	const struct fr_condition *c = NULL;
	char names[256] = "";
	size_t len = 0;
	int k;

	*r = (struct fr_rule){ .pid = -1, .any_syscall = true, .before_ns = 60 * NSEC_PER_SEC,
			       .after_ns = 10 * NSEC_PER_SEC, .max_per_hour = 60, .max_extend_ns = FR_RULE_EXTEND_AFTER,
			       .exec_timeout_ns = 60 * NSEC_PER_SEC, .line = config_setting_source_line(g) };
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return fr_conf_fail(x, g, "each rule must be a group { name = ...; condition = ...; }");
	if (!config_setting_get_member(g, "name"))
		return fr_conf_fail(x, g, "rule without a 'name'");
	if (!cond) {
		for (int i = 0; i < FR_COND__MAX; i++)
			fr_str_append(names, sizeof(names), &len, "%s%s", i == 0 ? "" : i == FR_COND__MAX - 1 ? " or " : ", ",
				      fr_conditions[i].name);
		return fr_conf_fail(x, g, "rule without a 'condition' (%s)", names);
	}
	if (config_setting_type(cond) != CONFIG_TYPE_STRING)
		return fr_conf_fail(x, cond, "'condition' must be a string");
	for (int i = 0; i < FR_COND__MAX; i++)
		if (strcmp(config_setting_get_string(cond), fr_conditions[i].name) == 0) {
			r->condition = i;
			c = &fr_conditions[i];
		}
	if (!c)
		return fr_conf_fail(x, cond, "unknown condition \"%s\"", config_setting_get_string(cond));

	for (int i = 0; i < config_setting_length(g); i++) {
		config_setting_t *s = config_setting_get_elem(g, (unsigned)i);

		if (s == cond)
			continue;
		if (takes(c, config_setting_name(s)))
			k = c->parse(x, s, r);
		else {
			k = parse_common(x, s, r, c->filters);
			if (k == 0)
				k = not_this_condition(x, s);
		}
		if (k < 0)
			return k;
	}
	/* names go into incident ids and file names */
	if (strlen(r->name) > 64 || strspn(r->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
					    strlen(r->name) || r->name[0] == '.')
		return fr_conf_fail(x, config_setting_get_member(g, "name"),
			    "rule name \"%s\": use at most 64 letters, digits, '_', '-' and '.' (not first)", r->name);
	if (c->check && (k = c->check(x, g, r)) < 0)
		return k;
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

bool fr_rule_matches(const struct fr_rule *r, const struct fr_record *rec, const char *cgroup)
{
	const struct fr_condition *c = fr_condition(r->condition);

	if (!c->record_type || rec->type != c->record_type || !c->match(r, rec))
		return false;
	if (r->pid >= 0 && rec->pid != (uint32_t)r->pid)
		return false;
	if (r->comm && fnmatch(r->comm, rec->comm, 0) != 0)
		return false;
	if (r->cgroup && (!cgroup || strncmp(cgroup, r->cgroup, strlen(r->cgroup)) != 0))
		return false;
	return true;
}
