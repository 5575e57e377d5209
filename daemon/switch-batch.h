/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sched source's per-CPU batches of switch records (bpf/event.h,
 * struct fr_switch_batch): which CPUs hold records, read through mmap, and
 * asking those CPUs to write them to their rings.
 */
#ifndef FR_SWITCH_BATCH_H
#define FR_SWITCH_BATCH_H

struct fr_switch_batches;

/* @map_fd: the switch_batch array (BPF_F_MMAPABLE, @ncpu entries);
 * @flush_prog_fd: fr_switch_flush. */
int fr_switch_batches_new(int map_fd, int flush_prog_fd, unsigned ncpu, struct fr_switch_batches **ret);
struct fr_switch_batches *fr_switch_batches_free(struct fr_switch_batches *b);

/* Runs fr_switch_flush on every CPU whose batch holds records, so that
 * what they hold reaches the rings before a drain.  Returns the records
 * still held on CPUs where that failed (CPU offline: an offline CPU went
 * idle first, which flushed it). */
unsigned fr_switch_batches_flush(struct fr_switch_batches *b);

#endif
