/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "governance.h"
#include "macro.h"
#include "parse.h"

static void govs_free(struct fr_rule_gov *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].hour);
	}
	free(v);
}

int fr_governance_set_rules(struct fr_governance *g, const struct fr_rules *rules)
{
	struct fr_rule_gov *v = calloc(rules->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < rules->n; i++) {
		v[i].name = strdup(rules->v[i].name);
		v[i].hour_cap = MAX(rules->v[i].max_per_hour, 1u);
		v[i].hour = calloc(v[i].hour_cap, sizeof(uint64_t));
		if (!v[i].name || !v[i].hour) {
			govs_free(v, i + 1);
			return -ENOMEM;
		}
		/* a rule that keeps its name keeps its cooldown and counts */
		for (size_t j = 0; j < g->n; j++)
			if (!strcmp(g->v[j].name, rules->v[i].name)) {
				v[i].last = g->v[j].last;
				v[i].fired = g->v[j].fired;
				v[i].joined = g->v[j].joined;
				v[i].suppressed = g->v[j].suppressed;
			}
	}
	govs_free(g->v, g->n);
	g->v = v;
	g->n = rules->n;
	return 0;
}

void fr_governance_done(struct fr_governance *g)
{
	govs_free(g->v, g->n);
	*g = (struct fr_governance){};
}

enum fr_fire fr_governance_fire(struct fr_governance *g, size_t ri, const struct fr_rule *r, uint64_t wall,
				uint64_t now, struct fr_span *const *open, unsigned n, unsigned max_open,
				unsigned *which, bool *extended, struct fr_span *opened)
{
	struct fr_rule_gov *st = &g->v[ri];

	/* inside an open incident's window: join it, and extend it, as far
	 * as its limit: an incident is written at most max_extend after its
	 * first end however often rules fire (later triggers open another) */
	for (unsigned i = 0; i < n; i++) {
		struct fr_span *s = open[i];
		if (wall < s->start || wall > s->end)
			continue;
		*extended = MIN(wall + r->after_ns, s->limit) > s->end;
		if (*extended)
			s->end = MIN(wall + r->after_ns, s->limit);
		st->joined++;
		*which = i;
		return FR_FIRE_JOINED;
	}
	/* governance: cooldown, then the hourly budget */
	if (st->last && r->cooldown_ns && now - st->last < r->cooldown_ns) {
		st->suppressed++;
		return FR_FIRE_SUPPRESSED_COOLDOWN;
	}
	while (st->hour_n && now - st->hour[(st->hour_pos + st->hour_cap - st->hour_n) % st->hour_cap] >
				     3600 * NSEC_PER_SEC)
		st->hour_n--;
	if (st->hour_n >= st->hour_cap || n >= max_open) {
		st->suppressed++;
		return FR_FIRE_SUPPRESSED_BUDGET;
	}
	*opened = (struct fr_span){
		.trigger = wall,
		.start = wall > r->before_ns ? wall - r->before_ns : 0,
		.end = wall + r->after_ns,
	};
	opened->limit = opened->end + (r->max_extend_ns == FR_RULE_EXTEND_AFTER ? r->after_ns : r->max_extend_ns);
	st->fired++;
	st->last = now;
	st->hour[st->hour_pos] = now;
	st->hour_pos = (st->hour_pos + 1) % st->hour_cap;
	st->hour_n++;
	return FR_FIRE_OPENED;
}
