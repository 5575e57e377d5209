/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A per-CPU budget of stacks a second, for the records that take one at
 * a rate others decide (fatal signals, wakers of long waits): a storm of
 * them keeps its records, past the budget without their stacks.
 */
#ifndef FR_STACK_BUDGET_BPF_H
#define FR_STACK_BUDGET_BPF_H

#include "emit.bpf.h"

/* the value of a PERCPU_ARRAY of one element */
struct fr_stack_budget {
	__u64 second;
	__u32 used;
};

/* May one more stack be taken at @now (ns), @per_second allowed?  @map:
 * the caller's PERCPU_ARRAY of struct fr_stack_budget. */
static __always_inline bool fr_stack_allowed(void *map, __u64 now, __u32 per_second)
{
	__u32 zero = 0;
	struct fr_stack_budget *b = bpf_map_lookup_elem(map, &zero);
	__u64 second = now / 1000000000ULL;

	if (!b)
		return false;
	if (b->second != second) {
		b->second = second;
		b->used = 0;
	}
	if (b->used >= per_second)
		return false;
	b->used++;
	return true;
}

#endif
