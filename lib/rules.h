/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trigger rules (triggers.rules in flightrec.conf): a condition, filters,
 * a window and governance.  Parsed and validated here (file:line errors);
 * evaluated by the daemon's trigger engine.
 */
#ifndef FR_RULES_H
#define FR_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rule.h"

/* The rules in force when the configuration has no triggers.rules, as
 * conf/flightrec.conf ships them: libconfig text, parsed by
 * fr_rules_defaults(). */
extern const char fr_rules_default_text[];

const char *fr_rule_condition_name(enum fr_rule_condition c);

void fr_rules_done(struct fr_rules *r);
/* Whether @rec (its cgroup's path: @cgroup, NULL when not known) fires
 * rule @r: its condition's match, then the rule's filters (pid, comm,
 * cgroup).  The daemon's engine and frctl rules test both ask this. */
struct fr_record;
bool fr_rule_matches(const struct fr_rule *r, const struct fr_record *rec, const char *cgroup);
/* Frees what one rule owns (not the rule itself). */
void fr_rule_done(struct fr_rule *r);
/* *@dst = a deep copy of @src: 0 or -ENOMEM (then *@dst owns nothing). */
int fr_rule_copy(struct fr_rule *dst, const struct fr_rule *src);
/* A copy of NULL-terminated @v (NULL: NULL); NULL also when out of memory. */
char **fr_strv_copy(char *const *v);

struct config_setting_t;
/* Parses the list triggers.rules into @r.  On error writes "file:line:
 * message" into @err and returns -EINVAL. */
int fr_rules_parse(struct fr_rules *r, const struct config_setting_t *list, const char *file, char *err,
		   size_t errlen);
/* Replaces the rules of @r with the default ones (fr_rules_default_text);
 * the budget stays. */
int fr_rules_defaults(struct fr_rules *r);

#endif
