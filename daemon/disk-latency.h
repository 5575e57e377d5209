/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-disk I/O latency over the last metrics interval, from the block
 * source's BPF histograms: count and percentiles (bucket upper bounds). */
#ifndef FR_DISK_LATENCY_H
#define FR_DISK_LATENCY_H

struct fr_disk_latency;
struct json_object;

int fr_disk_latency_new(int map_fd, unsigned ncpu, struct fr_disk_latency **ret);
struct fr_disk_latency *fr_disk_latency_free(struct fr_disk_latency *d);
/* fr_metrics_block_cb: adds {"MAJ:MIN": {count, p50_us, p90_us, p99_us,
 * max_us}} for each disk with requests since the previous call. */
void fr_disk_latency_sample(struct json_object *out, void *userdata);

#endif
