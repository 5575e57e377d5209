/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hardware counters for the metrics, where the CPU has a PMU: cycles,
 * instructions and cache misses counted on every CPU (perf_event_open,
 * counting only, no sampling), reported per metrics interval as rates and
 * instructions per cycle.  Virtual machines often have no PMU; then there
 * is nothing to open and the metrics have no "pmu" object.
 */
#ifndef FR_PMU_COUNTERS_H
#define FR_PMU_COUNTERS_H

struct fr_pmu_counters;
struct json_object;

/* -ENOENT (or the kernel's error) when the hardware counts nothing. */
int fr_pmu_counters_open(unsigned ncpu, struct fr_pmu_counters **ret);
struct fr_pmu_counters *fr_pmu_counters_free(struct fr_pmu_counters *p);
/* Adds "pmu": {cycles_per_s, instructions_per_s, cache_misses_per_s, ipc}
 * to the metrics object @o (rates since the previous call). */
void fr_pmu_counters_sample(struct fr_pmu_counters *p, struct json_object *o);

#endif
