/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/event.h"
#include "disk-latency.h"

#define DISKS_MAX 256

struct disk {
	uint32_t dev;
	uint64_t prev[FR_LAT_SLOTS];
};

struct fr_disk_latency {
	int fd;
	unsigned ncpu;
	struct fr_lat_hist *percpu; /* ncpu values, as the kernel returns them */
	struct disk disks[DISKS_MAX];
	unsigned ndisks;
};

int fr_disk_latency_new(int map_fd, unsigned ncpu, struct fr_disk_latency **ret)
{
	struct fr_disk_latency *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->fd = map_fd;
	d->ncpu = ncpu;
	d->percpu = calloc(ncpu, sizeof(*d->percpu));
	if (!d->percpu) {
		free(d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

struct fr_disk_latency *fr_disk_latency_free(struct fr_disk_latency *d)
{
	if (!d)
		return NULL;
	free(d->percpu);
	free(d);
	return NULL;
}

static struct disk *disk_of(struct fr_disk_latency *d, uint32_t dev)
{
	for (unsigned i = 0; i < d->ndisks; i++)
		if (d->disks[i].dev == dev)
			return &d->disks[i];
	if (d->ndisks == DISKS_MAX)
		return NULL;
	d->disks[d->ndisks] = (struct disk){ .dev = dev };
	return &d->disks[d->ndisks++];
}

/* upper bound, in microseconds, of slot n */
static uint64_t slot_us(unsigned n)
{
	return 2ULL << n;
}

void fr_disk_latency_sample(struct json_object *out, void *userdata)
{
	struct fr_disk_latency *d = userdata;
	uint32_t key, next, *prev = NULL;

	if (!d || d->fd < 0)
		return;
	while (bpf_map_get_next_key(d->fd, prev, &next) == 0) {
		uint64_t delta[FR_LAT_SLOTS], count = 0, acc = 0;
		struct disk *k;
		char name[32];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(d->fd, &key, d->percpu) < 0)
			continue;
		k = disk_of(d, key);
		if (!k)
			continue;
		for (unsigned s = 0; s < FR_LAT_SLOTS; s++) {
			uint64_t sum = 0;
			for (unsigned c = 0; c < d->ncpu; c++)
				sum += d->percpu[c].slots[s];
			delta[s] = sum - k->prev[s];
			k->prev[s] = sum;
			count += delta[s];
		}
		if (!count)
			continue;
		struct json_object *o = json_object_new_object();
		static const struct { const char *name; double q; } qs[] = {
			{ "p50_us", 0.50 }, { "p90_us", 0.90 }, { "p99_us", 0.99 } };
		unsigned qi = 0, last = 0;
		json_object_object_add(o, "count", json_object_new_uint64(count));
		for (unsigned s = 0; s < FR_LAT_SLOTS; s++) {
			acc += delta[s];
			if (delta[s])
				last = s;
			while (qi < 3 && (double)acc >= qs[qi].q * (double)count)
				json_object_object_add(o, qs[qi++].name, json_object_new_uint64(slot_us(s)));
		}
		json_object_object_add(o, "max_us", json_object_new_uint64(slot_us(last)));
		snprintf(name, sizeof(name), "%u:%u", key >> 20, key & 0xfffff);
		json_object_object_add(out, name, o);
	}
}
