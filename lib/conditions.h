/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trigger conditions, one table (issue 44): each condition of
 * triggers.rules is one entry of fr_conditions[] in conditions.c, which
 * says everything the rest of the code asks of it: its name, the records
 * it matches, the settings it takes and what they require, the source it
 * needs, how it lowers its threshold into that source, and its match.
 * rules.c parses what every rule shares and hands the rest to the entry;
 * conf.c checks the sources it needs and lowers their thresholds; the
 * trigger engine (daemon/trigger.c) matches records with it.  A
 * condition that matches no record (record_type 0) is fired by the daemon
 * itself: "manual" by frctl freeze, "pressure" by its watcher
 * (daemon/pressure.c).
 */
#ifndef FR_CONDITIONS_H
#define FR_CONDITIONS_H

#include <libconfig.h>
#include <stdbool.h>
#include <stdint.h>

#include "rule.h"

struct fr_conf_ctx;
struct fr_record;

struct fr_condition {
	const char *name;
	/* the records it matches (FR_REC_*); 0: none, the daemon fires it */
	uint16_t record_type;
	/* comm, pid and cgroup filter its records ("pressure" takes cgroup as
	 * the cgroup it watches, in its parse) */
	bool filters;
	/* its own settings' names, NULL-terminated; NULL: none */
	const char *const *settings;
	/* Parses @s, one of its settings, into @r: 0, or fr_conf_fail()'s
	 * -EINVAL. */
	int (*parse)(const struct fr_conf_ctx *x, const config_setting_t *s, struct fr_rule *r);
	/* After every setting of rule @g: what it requires, its defaults. */
	int (*check)(const struct fr_conf_ctx *x, const config_setting_t *g, struct fr_rule *r);
	/* The settings (dotted, of the setting table in conf.c) its source
	 * needs true: a rule on a source switched off would never fire, an
	 * error.  NULL: none. */
	const char *needs[2];
	/* The source's setting that must let the rule's records through:
	 * a threshold lowered to the rule's, or a signal list the rule's
	 * signals join (fr_conf_lower_for_rules()).  NULL: none. */
	const char *lowers;
	/* Whether @rec (of record_type) is one the rule matches, before the
	 * filters: over the threshold, of its calls or signals. */
	bool (*match)(const struct fr_rule *r, const struct fr_record *rec);
};

extern const struct fr_condition fr_conditions[FR_COND__MAX];

static inline const struct fr_condition *fr_condition(enum fr_rule_condition c)
{
	return &fr_conditions[c < FR_COND__MAX ? c : FR_COND_MANUAL];
}

/* "memory", "io", "cpu" (enum fr_pressure_resource); NULL past them. */
const char *fr_pressure_resource_name(unsigned resource);

#endif
