/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trigger rule, as parsed (rules.h) and as its condition
 * (conditions.h) and the trigger engine read it: types only.
 */
#ifndef FR_RULE_H
#define FR_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What each is, and all it takes: fr_conditions[] (conditions.h). */
enum fr_rule_condition {
	FR_COND_SYSCALL,  /* a syscall record with duration >= threshold */
	FR_COND_BLOCK,    /* a block record with duration >= threshold */
	FR_COND_RUNQ,     /* a runq record with duration >= threshold */
	FR_COND_OFFCPU,   /* an offcpu record with duration >= threshold */
	FR_COND_OOM,      /* an OOM kill */
	FR_COND_SIGNAL,   /* a signal record of one of the rule's signals */
	FR_COND_PRESSURE, /* PSI stall over a share of a window */
	FR_COND_MANUAL,   /* frctl freeze */
	FR_COND__MAX,
};

enum fr_pressure_resource {
	FR_PRESSURE_MEMORY,
	FR_PRESSURE_IO,
	FR_PRESSURE_CPU,
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
	char *cgroup;          /* path prefix; FR_COND_PRESSURE: the cgroup watched */
	uint64_t syscalls[FR_RULE_SYSCALL_WORDS]; /* syscall_latency, offcpu_latency */
	bool any_syscall;
	uint64_t signals;      /* bit n: signal n (FR_COND_SIGNAL) */
	struct {               /* FR_COND_PRESSURE: of @cgroup (NULL: the system's) */
		uint8_t resource;  /* enum fr_pressure_resource */
		bool full;         /* "full" (all tasks stalled), not "some" */
		uint32_t ppm;      /* stalled at least this share of... */
		uint64_t over_ns;  /* ...this window */
	} pressure;
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

#endif
