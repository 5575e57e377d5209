/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What happens when a rule fires: it joins an incident whose window holds
 * its record (extending the window by its 'after', as far as the
 * incident's limit), or it is suppressed (its cooldown since its last
 * incident, its hourly budget, too many incidents open), or it opens an
 * incident: the window [t - before, t + after].  The daemon's trigger
 * engine (daemon/trigger.c) decides with this, live; frctl rules test
 * decides with the same code over stored records: one implementation.
 *
 * Pure: no clock is read and nothing is written.  The caller gives the
 * record's time (wall clock ns: windows are wall-clock ranges, as readers
 * select chunks) and the governance clock (@now: the daemon's monotonic
 * clock as it fires; a replay's record time stamp), and keeps the open
 * windows (struct fr_span), which it closes when their incidents are
 * written.
 */
#ifndef FR_GOVERNANCE_H
#define FR_GOVERNANCE_H

#include <stddef.h>
#include <stdint.h>

#include "rule.h"

/* An incident is written this long after its window's end (for its last
 * records to arrive); until then a trigger may still join it. */
#define FR_INCIDENT_SETTLE_NS (200ULL * 1000000ULL)

/* An incident's window. */
struct fr_span {
	uint64_t start, end; /* wall ns; end moves when triggers join */
	uint64_t limit;      /* joining moves end up to here */
	uint64_t trigger;    /* the opening trigger's record time */
};

/* A rule's governance state and counts. */
struct fr_rule_gov {
	char *name;
	uint64_t last;  /* governance clock of its last incident; 0: never */
	uint64_t *hour; /* governance clock of its incidents in the last hour, a ring */
	uint32_t hour_n, hour_pos, hour_cap;
	uint64_t fired, joined, suppressed;
};

struct fr_governance {
	struct fr_rule_gov *v;
	size_t n;
};

enum fr_fire {
	FR_FIRE_OPENED,              /* *opened is the new window */
	FR_FIRE_JOINED,              /* *which is the window joined */
	FR_FIRE_SUPPRESSED_COOLDOWN, /* within the rule's cooldown */
	FR_FIRE_SUPPRESSED_BUDGET,   /* over its max_per_hour, or too many open */
};

/* For @rules (in their order): a rule that keeps its name keeps its state
 * and counts.  0 or -ENOMEM (@g unchanged). */
int fr_governance_set_rules(struct fr_governance *g, const struct fr_rules *rules);
void fr_governance_done(struct fr_governance *g);

/* Rule @ri (@r) fired on a record of wall time @wall, governance clock
 * @now; @open are the @n windows open (at most @max_open may be).  On
 * FR_FIRE_JOINED, *extended says whether the window's end moved. */
enum fr_fire fr_governance_fire(struct fr_governance *g, size_t ri, const struct fr_rule *r, uint64_t wall,
				uint64_t now, struct fr_span *const *open, unsigned n, unsigned max_open,
				unsigned *which, bool *extended, struct fr_span *opened);

#endif
