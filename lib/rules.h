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

enum fr_rule_condition {
	FR_COND_SYSCALL,  /* a syscall record with duration >= threshold */
	FR_COND_BLOCK,    /* a block record with duration >= threshold */
	FR_COND_RUNQ,     /* a runq record with duration >= threshold */
	FR_COND_OFFCPU,   /* an offcpu record with duration >= threshold */
	FR_COND_OOM,      /* an OOM kill */
	FR_COND_SIGNAL,   /* a signal record of one of the rule's signals */
	FR_COND_MANUAL,   /* frctl freeze */
	FR_COND__MAX,
};

#define FR_RULE_SYSCALL_WORDS 8 /* 512 syscall numbers */
#define FR_RULES_MAX 256        /* rules in triggers.rules */

struct fr_rule {
	char *name;
	enum fr_rule_condition condition;
	uint64_t threshold_ns;
	/* filters (unset: any) */
	char *comm;            /* exact or fnmatch(3) glob */
	int64_t pid;           /* -1: any */
	char *cgroup;          /* path prefix */
	uint64_t syscalls[FR_RULE_SYSCALL_WORDS]; /* syscall_latency, offcpu_latency */
	bool any_syscall;
	uint64_t signals;      /* bit n: signal n (FR_COND_SIGNAL) */
	/* window */
	uint64_t before_ns, after_ns;
	/* governance */
	uint64_t cooldown_ns;
	uint32_t max_per_hour;
	/* how far triggers that join an incident this rule opened may move
	 * its window's end past the first end: then it is written, and
	 * later triggers open another (FR_RULE_EXTEND_AFTER: its 'after') */
	uint64_t max_extend_ns;
	/* action */
	char **exec;           /* argv, NULL-terminated; the incident path is appended */
	uint64_t exec_timeout_ns;
	int line;              /* where it was defined */
};

struct fr_rules {
	struct fr_rule *v;
	size_t n;
	uint64_t incidents_size;  /* budget of incidents/ */
	uint32_t incidents_max;
};

#define FR_RULE_EXTEND_AFTER UINT64_MAX

/* The rules in force when the configuration has no triggers.rules, as
 * conf/flightrec.conf ships them: libconfig text, parsed by
 * fr_rules_defaults(). */
extern const char fr_rules_default_text[];

const char *fr_rule_condition_name(enum fr_rule_condition c);

void fr_rules_done(struct fr_rules *r);
/* Frees what one rule owns (not the rule itself). */
void fr_rule_done(struct fr_rule *r);

struct config_setting_t;
/* Parses the list triggers.rules into @r.  On error writes "file:line:
 * message" into @err and returns -EINVAL. */
int fr_rules_parse(struct fr_rules *r, const struct config_setting_t *list, const char *file, char *err,
		   size_t errlen);
/* Replaces the rules of @r with the default ones (fr_rules_default_text);
 * the budget stays. */
int fr_rules_defaults(struct fr_rules *r);

#endif
