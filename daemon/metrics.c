/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "../lib/proc-stat.h"
#include "metrics.h"

#define CPUS_MAX 1024
#define DEVS_MAX 256

struct cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct counters {
	char name[32];
	uint64_t v[8];
};

struct proc_cpu {
	uint64_t ticks;   /* utime + stime at the last top scan */
	uint64_t seen;    /* scan generation */
	char comm[17];
};

struct fr_metrics {
	unsigned top_count;
	struct cpu_times prev_cpu[CPUS_MAX];
	unsigned ncpu_prev;
	struct counters prev_disk[DEVS_MAX], prev_net[DEVS_MAX];
	unsigned ndisk_prev, nnet_prev;
	uint64_t prev_mono, prev_top_mono, generation;
	struct fr_pid_map procs;
	long ticks_per_s;
};


int fr_metrics_new(unsigned top_count, struct fr_metrics **ret)
{
	struct fr_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->top_count = top_count;
	m->ticks_per_s = sysconf(_SC_CLK_TCK);
	if (m->ticks_per_s <= 0)
		m->ticks_per_s = 100;
	*ret = m;
	return 0;
}

struct fr_metrics *fr_metrics_free(struct fr_metrics *m)
{
	size_t i = 0;
	void *v;

	if (!m)
		return NULL;
	while ((v = fr_pid_map_next(&m->procs, &i, NULL)))
		free(v);
	fr_pid_map_done(&m->procs);
	free(m);
	return NULL;
}

/* A percentage with one decimal, printed as such (not 2.7000000000000002). */
static struct json_object *pct(uint64_t part, uint64_t total)
{
	char buf[32];
	double v = total ? (double)((uint64_t)(1000.0 * (double)part / (double)total + 0.5)) / 10.0 : 0.0;

	snprintf(buf, sizeof(buf), "%.1f", v);
	return json_object_new_double_s(v, buf);
}

static void add_cpus(struct fr_metrics *m, struct json_object *o)
{
	struct json_object *arr = json_object_new_array();
	char line[512];
	unsigned n = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < CPUS_MAX) {
		struct cpu_times t = {};
		unsigned id;
		if (strncmp(line, "cpu", 3) != 0 || line[3] == ' ')
			continue;
		if (sscanf(line, "cpu%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64, &id, &t.user, &t.nice, &t.system, &t.idle, &t.iowait,
			   &t.irq, &t.softirq, &t.steal) != 9)
			continue;
		if (n < m->ncpu_prev) {
			struct cpu_times *p = &m->prev_cpu[n];
			uint64_t du = t.user + t.nice - p->user - p->nice, ds = t.system - p->system,
				 di = t.idle - p->idle, dw = t.iowait - p->iowait,
				 dq = t.irq + t.softirq - p->irq - p->softirq, dst = t.steal - p->steal;
			uint64_t total = du + ds + di + dw + dq + dst;
			struct json_object *c = json_object_new_object();
			json_object_object_add(c, "cpu", json_object_new_int((int)id));
			json_object_object_add(c, "user", pct(du, total));
			json_object_object_add(c, "system", pct(ds, total));
			json_object_object_add(c, "iowait", pct(dw, total));
			json_object_object_add(c, "irq", pct(dq, total));
			json_object_object_add(c, "steal", pct(dst, total));
			json_object_object_add(c, "idle", pct(di, total));
			json_object_array_add(arr, c);
		}
		m->prev_cpu[n++] = t;
	}
	fclose(f);
	m->ncpu_prev = n;
	if (json_object_array_length(arr))
		json_object_object_add(o, "cpus", arr);
	else
		json_object_put(arr);
}

static void add_memory(struct json_object *o)
{
	static const char *const keys[] = { "MemTotal", "MemAvailable", "Cached", "Dirty", "SwapTotal", "SwapFree" };
	uint64_t v[6] = {};
	char line[256], key[64];
	uint64_t val;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %" SCNu64, key, &val) == 2)
			for (unsigned i = 0; i < ELEMENTSOF(keys); i++)
				if (strcmp(key, keys[i]) == 0)
					v[i] = val;
	fclose(f);
	struct json_object *mem = json_object_new_object();
	json_object_object_add(mem, "total_kb", json_object_new_uint64(v[0]));
	json_object_object_add(mem, "available_kb", json_object_new_uint64(v[1]));
	json_object_object_add(mem, "cached_kb", json_object_new_uint64(v[2]));
	json_object_object_add(mem, "dirty_kb", json_object_new_uint64(v[3]));
	json_object_object_add(mem, "swap_used_kb", json_object_new_uint64(v[4] - MIN(v[4], v[5])));
	json_object_object_add(o, "memory", mem);
}

/* PSI: absent (ENOENT) or switched off (EOPNOTSUPP on read) is normal. */
static void add_pressure(struct json_object *o)
{
	static const char *const res[] = { "cpu", "memory", "io" };
	struct json_object *p = NULL;

	for (unsigned i = 0; i < ELEMENTSOF(res); i++) {
		char path[64], line[256], kind[8];
		double a10, a60, a300;
		uint64_t total;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/pressure/%s", res[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		struct json_object *r = json_object_new_object();
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%7s avg10=%lf avg60=%lf avg300=%lf total=%" SCNu64, kind, &a10, &a60,
				   &a300, &total) == 5) {
				struct json_object *k = json_object_new_object();
				json_object_object_add(k, "avg10", json_object_new_double(a10));
				json_object_object_add(k, "avg60", json_object_new_double(a60));
				json_object_object_add(k, "total_us", json_object_new_uint64(total));
				json_object_object_add(r, kind, k);
			}
		fclose(f);
		if (json_object_object_length(r) == 0) {
			json_object_put(r);
			continue;
		}
		if (!p)
			p = json_object_new_object();
		json_object_object_add(p, res[i], r);
	}
	if (p)
		json_object_object_add(o, "pressure", p);
}

static void add_load(struct json_object *o)
{
	double l1, l5, l15;
	FILE *f = fopen("/proc/loadavg", "re");

	if (!f)
		return;
	if (fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3) {
		struct json_object *a = json_object_new_array();
		json_object_array_add(a, json_object_new_double(l1));
		json_object_array_add(a, json_object_new_double(l5));
		json_object_array_add(a, json_object_new_double(l15));
		json_object_object_add(o, "load", a);
	}
	fclose(f);
}

static const struct counters *find_prev(const struct counters *prev, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(prev[i].name, name) == 0)
			return &prev[i];
	return NULL;
}

/* Counters that moved since the last sample, per device, as named fields. */
static void add_deltas(struct json_object *o, const char *key, struct counters *cur, unsigned ncur,
		       struct counters *prev, unsigned *nprev, const char *const *fields, unsigned nfields)
{
	struct json_object *devs = json_object_new_object();

	for (unsigned i = 0; i < ncur; i++) {
		const struct counters *p = find_prev(prev, *nprev, cur[i].name);
		uint64_t any = 0;
		if (!p)
			continue;
		for (unsigned k = 0; k < nfields; k++)
			any |= cur[i].v[k] - p->v[k];
		if (!any)
			continue;
		struct json_object *d = json_object_new_object();
		for (unsigned k = 0; k < nfields; k++)
			json_object_object_add(d, fields[k], json_object_new_uint64(cur[i].v[k] - p->v[k]));
		json_object_object_add(devs, cur[i].name, d);
	}
	memcpy(prev, cur, ncur * sizeof(*cur));
	*nprev = ncur;
	if (json_object_object_length(devs))
		json_object_object_add(o, key, devs);
	else
		json_object_put(devs);
}

static void add_disks(struct fr_metrics *m, struct json_object *o)
{
	static const char *const fields[] = { "reads", "read_bytes", "writes", "write_bytes", "io_ms" };
	struct counters cur[DEVS_MAX];
	char line[512], name[32];
	unsigned n = 0, major, minor;
	uint64_t rd, rds, wr, wrs, ioms;
	FILE *f = fopen("/proc/diskstats", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < DEVS_MAX) {
		if (sscanf(line, "%u %u %31s %" SCNu64 " %*u %" SCNu64 " %*u %" SCNu64 " %*u %" SCNu64 " %*u %*u %" SCNu64,
			   &major, &minor, name, &rd, &rds, &wr, &wrs, &ioms) != 8)
			continue;
		if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3))
			continue;
		cur[n] = (struct counters){ .v = { rd, rds * 512, wr, wrs * 512, ioms } };
		snprintf(cur[n].name, sizeof(cur[n].name), "%s", name);
		n++;
	}
	fclose(f);
	add_deltas(o, "disks", cur, n, m->prev_disk, &m->ndisk_prev, fields, ELEMENTSOF(fields));
}

static void add_net(struct fr_metrics *m, struct json_object *o)
{
	static const char *const fields[] = { "rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
					      "tx_bytes", "tx_packets", "tx_errors", "tx_dropped" };
	struct counters cur[DEVS_MAX];
	char line[512], name[32];
	unsigned n = 0;
	uint64_t v[8];
	FILE *f = fopen("/proc/net/dev", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < DEVS_MAX) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = ' ';
		if (sscanf(line, " %31s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %*u %*u %*u %*u %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64, name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) != 9)
			continue;
		cur[n] = (struct counters){};
		memcpy(cur[n].v, v, sizeof(v));
		snprintf(cur[n].name, sizeof(cur[n].name), "%s", name);
		n++;
	}
	fclose(f);
	add_deltas(o, "net", cur, n, m->prev_net, &m->nnet_prev, fields, ELEMENTSOF(fields));
}

struct top_entry {
	uint32_t pid;
	uint64_t ticks;
	const char *comm;
};

static int cmp_top(const void *a, const void *b)
{
	const struct top_entry *x = a, *y = b;
	return x->ticks < y->ticks ? 1 : x->ticks > y->ticks ? -1 : 0;
}

/* CPU used per process since the previous top scan, from /proc/PID/stat. */
static void add_top(struct fr_metrics *m, struct json_object *o, uint64_t now)
{
	struct top_entry *top = NULL;
	size_t ntop = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");
	double secs = m->prev_top_mono ? (double)(now - m->prev_top_mono) / 1e9 : 0;

	if (!d)
		return;
	m->generation++;
	while ((de = readdir(d))) {
		struct fr_proc_stat st;
		uint32_t pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		if (fr_proc_stat_read(pid, &st) < 0)
			continue;
		struct proc_cpu *p = fr_pid_map_get(&m->procs, pid);
		uint64_t ticks = st.utime + st.stime, delta = 0;
		if (p && ticks >= p->ticks)
			delta = ticks - p->ticks;
		if (!p) {
			p = calloc(1, sizeof(*p));
			if (!p || fr_pid_map_put(&m->procs, pid, p, NULL) < 0) {
				free(p);
				continue;
			}
		}
		p->ticks = ticks;
		p->seen = m->generation;
		snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
		if (delta && secs > 0) {
			if (ntop == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct top_entry *t = realloc(top, c * sizeof(*t));
				if (!t)
					continue;
				top = t;
				cap = c;
			}
			top[ntop++] = (struct top_entry){ pid, delta, p->comm };
		}
	}
	closedir(d);
	/* forget processes that are gone */
	size_t i = 0;
	uint32_t pid;
	struct proc_cpu *p;
	while ((p = fr_pid_map_next(&m->procs, &i, &pid)))
		if (p->seen != m->generation) {
			free(fr_pid_map_remove(&m->procs, pid));
			i = 0;
		}
	if (secs > 0) {
		struct json_object *arr = json_object_new_array();
		if (ntop > 1)
			qsort(top, ntop, sizeof(*top), cmp_top);
		for (size_t k = 0; k < ntop && k < m->top_count; k++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(e, "pid", json_object_new_int64(top[k].pid));
			json_object_object_add(e, "comm", json_object_new_string(top[k].comm));
			json_object_object_add(e, "cpu_pct",
					       (pct((uint64_t)((double)top[k].ticks * 1000),
									  (uint64_t)(secs * (double)m->ticks_per_s * 1000))));
			json_object_array_add(arr, e);
		}
		json_object_object_add(o, "top", arr);
	}
	free(top);
	m->prev_top_mono = now;
}

struct json_object *fr_metrics_sample(struct fr_metrics *m, int with_top, fr_metrics_block_cb block,
				      void *userdata)
{
	struct json_object *o = json_object_new_object();
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);

	if (!o)
		return NULL;
	add_cpus(m, o);
	add_memory(o);
	add_pressure(o);
	add_load(o);
	add_disks(m, o);
	add_net(m, o);
	if (block) {
		struct json_object *lat = json_object_new_object();
		block(lat, userdata);
		if (json_object_object_length(lat))
			json_object_object_add(o, "disk_latency", lat);
		else
			json_object_put(lat);
	}
	if (with_top)
		add_top(m, o, now);
	m->prev_mono = now;
	return o;
}
