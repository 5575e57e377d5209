/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "pmu-counters.h"

enum { CYCLES, INSTRUCTIONS, CACHE_MISSES, NCOUNTERS };
static const uint64_t configs[NCOUNTERS] = { PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS,
					     PERF_COUNT_HW_CACHE_MISSES };
static const char *const names[NCOUNTERS] = { "cycles_per_s", "instructions_per_s", "cache_misses_per_s" };

struct fr_pmu_counters {
	unsigned ncpu;
	int *fds; /* ncpu * NCOUNTERS; -EBADF where not counting */
	uint64_t last[NCOUNTERS];
	uint64_t last_ns;
};


static int open_counter(unsigned cpu, uint64_t config)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = config,
		/* scaled by the time counted when the PMU multiplexes */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? negative_errno() : fd;
}

/* Sum over CPUs of counter @c, scaled for multiplexing. */
static uint64_t total(struct fr_pmu_counters *p, unsigned c)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < p->ncpu; i++) {
		uint64_t v[3];
		int fd = p->fds[i * NCOUNTERS + c];
		if (fd < 0 || read(fd, v, sizeof(v)) != (ssize_t)sizeof(v) || !v[2])
			continue;
		sum += v[2] == v[1] ? v[0] : (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]);
	}
	return sum;
}

int fr_pmu_counters_open(unsigned ncpu, struct fr_pmu_counters **ret)
{
	struct fr_pmu_counters *p;
	int k = open_counter(0, PERF_COUNT_HW_CPU_CYCLES);

	if (k < 0)
		return k; /* no PMU: ENOENT, EOPNOTSUPP or ENODEV */
	close(k);
	p = calloc(1, sizeof(*p));
	if (!p || !(p->fds = malloc(ncpu * NCOUNTERS * sizeof(int)))) {
		free(p);
		return -ENOMEM;
	}
	p->ncpu = ncpu;
	for (unsigned i = 0; i < ncpu * NCOUNTERS; i++)
		p->fds[i] = open_counter(i / NCOUNTERS, configs[i % NCOUNTERS]);
	for (unsigned c = 0; c < NCOUNTERS; c++)
		p->last[c] = total(p, c);
	p->last_ns = fr_now_ns(CLOCK_MONOTONIC);
	*ret = p;
	return 0;
}

struct fr_pmu_counters *fr_pmu_counters_free(struct fr_pmu_counters *p)
{
	if (!p)
		return NULL;
	for (unsigned i = 0; i < p->ncpu * NCOUNTERS; i++)
		closep(&p->fds[i]);
	free(p->fds);
	free(p);
	return NULL;
}

void fr_pmu_counters_sample(struct fr_pmu_counters *p, struct json_object *o)
{
	struct json_object *j = json_object_new_object();
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC), d[NCOUNTERS];
	double secs = (double)(now - p->last_ns) / 1e9;

	for (unsigned c = 0; c < NCOUNTERS; c++) {
		uint64_t t = total(p, c);
		d[c] = t >= p->last[c] ? t - p->last[c] : 0;
		p->last[c] = t;
		json_object_object_add(j, names[c], json_object_new_uint64(secs > 0 ? (uint64_t)((double)d[c] / secs) : 0));
	}
	p->last_ns = now;
	json_object_object_add(j, "ipc", json_object_new_double(d[CYCLES] ? (double)d[INSTRUCTIONS] / (double)d[CYCLES] : 0));
	json_object_object_add(o, "pmu", j);
}
