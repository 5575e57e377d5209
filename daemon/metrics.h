/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * System metrics, sampled every metrics.interval from /proc and written as
 * one 'metrics' record (a JSON object, nested per subsystem): per-CPU
 * utilisation, memory, pressure (PSI, where the kernel has it on), load,
 * per-disk and per-interface counters, per-disk I/O latency percentiles
 * (from the block source's histograms), and every metrics.top_interval the
 * processes that used the most CPU.  Rates are deltas over the interval.
 */
#ifndef FR_METRICS_H
#define FR_METRICS_H

#include <stdint.h>

struct fr_metrics;
struct json_object;

/* Per-device latency histogram reader (the block source's BPF map), or
 * NULL: fills @out with one object per device. */
typedef void (*fr_metrics_block_cb)(struct json_object *out, void *userdata);

int fr_metrics_new(unsigned top_count, struct fr_metrics **ret);
struct fr_metrics *fr_metrics_free(struct fr_metrics *m);

/* Takes a sample; returns a new JSON object (NULL on allocation failure).
 * @with_top: include the top processes (every top_interval). */
struct json_object *fr_metrics_sample(struct fr_metrics *m, int with_top, fr_metrics_block_cb block,
				      void *userdata);

#endif
