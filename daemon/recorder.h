/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recording path in user space: records from the rings go into one
 * chunk builder per CPU; full or old chunks are compressed and handed to
 * the store writer; every loss (ring drops counted in BPF, chunks the disk
 * refused) becomes a gap record on the CPU where it happened.
 */
#ifndef FR_RECORDER_H
#define FR_RECORDER_H

#include <stdint.h>

#include "../lib/conf.h"
#include "../lib/record.h"
#include "../lib/store-writer.h"
#include "rings.h"

struct fr_recorder;

struct fr_recorder_cpu_stats {
	uint64_t emitted;   /* counted in BPF, all sources */
	uint64_t delivered; /* records received from the ring */
	uint64_t dropped;   /* ring reserve failures, all sources */
	uint64_t untracked; /* syscalls not timed (no per-thread state) */
	uint64_t lost_write;/* records in chunks the store could not queue (out
			     * of memory) or write, and records with no room
			     * while a full chunk could not be compressed */
	uint64_t lost_decode;/* delivered records the daemon could not decode */
};

int fr_recorder_new(const struct fr_conf *c, unsigned ncpu, struct fr_recorder **ret);
struct fr_recorder *fr_recorder_free(struct fr_recorder *r);

void fr_recorder_set_writer(struct fr_recorder *r, struct fr_store_writer *w);
void fr_recorder_set_rings(struct fr_recorder *r, struct fr_rings *rings);
/* Reload: chunks closed from now on are compressed at @level. */
int fr_recorder_set_zstd_level(struct fr_recorder *r, int level);
struct fr_triggers;
void fr_recorder_set_triggers(struct fr_recorder *r, struct fr_triggers *t);
/* The cgroup2 mount the recorder names cgroups on (-1: none), lent. */
int fr_recorder_cgroup_fd(const struct fr_recorder *r);
/* Names for sample frames; the recorder owns @s from now on. */
struct fr_symbolizer;
void fr_recorder_set_symbolizer(struct fr_recorder *r, struct fr_symbolizer *s);
struct fr_symbolizer *fr_recorder_symbolizer(struct fr_recorder *r);
/* Takes ownership of @p: user stacks of samples and offcpu records are
 * unwound and named by its helper (without one, a stack keeps only its
 * interrupted instruction, unnamed). */
struct fr_parser;
void fr_recorder_set_parser(struct fr_recorder *r, struct fr_parser *p);
struct fr_parser *fr_recorder_parser(struct fr_recorder *r);

/* fr_ring_cb: one raw BPF record. */
int fr_recorder_on_event(void *userdata, unsigned cpu, const void *data, size_t size);
/* fr_store_loss_cb */
void fr_recorder_on_write_loss(uint32_t cpu, uint64_t records, uint64_t gap_lost, int error,
			       void *userdata);

/* Periodic work: turn new losses into gaps, close chunks older than the
 * configured age.  @now_mono is CLOCK_MONOTONIC ns. */
void fr_recorder_tick(struct fr_recorder *r, uint64_t now_mono);
/* After each drain of the rings: records held for their wakers
 * (wakers.h) that may go now (@all: every one, before stopping). */
void fr_recorder_drained(struct fr_recorder *r, bool all);
/* Writes a keyframe: every live process as metadata.  Returns the number
 * of processes or -errno. */
int fr_recorder_keyframe(struct fr_recorder *r);
/* Records an annotation from process @pid (0 if unknown). */
void fr_recorder_mark(struct fr_recorder *r, uint32_t pid, const char *text, size_t len);
/* Records a user-space event made by the daemon (metrics) on this CPU. */
void fr_recorder_add_user(struct fr_recorder *r, const struct fr_record *rec);
/* Closes every open chunk (before a sync).  A chunk that cannot be
 * compressed (out of memory) stays open for the next try. */
void fr_recorder_flush(struct fr_recorder *r);
/* The same for the open chunks holding a record of @until_boot
 * (CLOCK_BOOTTIME ns) or before: those after it stay open. */
void fr_recorder_flush_until(struct fr_recorder *r, uint64_t until_boot);
/* The last flush, at shutdown: the events of chunks that still cannot be
 * compressed are counted as lost (lost_write). */
void fr_recorder_finish(struct fr_recorder *r);

uint64_t fr_recorder_records(const struct fr_recorder *r);
/* offcpu records with stacks so far, by how their user stack went (enum
 * fr_offcpu_user of bpf/event.h: copied, or why not) */
void fr_recorder_offcpu_stats(const struct fr_recorder *r, uint64_t ret[FR_OFFCPU_USER__MAX]);
/* Offcpu records by their waker's context (FR_WAKER_*), and the join's
 * counters (wakers.h). */
struct fr_wakers_stats;
void fr_recorder_waker_stats(const struct fr_recorder *r, uint64_t ret[FR_WAKER_KINDS], struct fr_wakers_stats *ws);
/* signal records so far, by what their stack is (enum fr_signal_stack of
 * bpf/event.h: taken, a kernel thread's, skipped over the budget) */
void fr_recorder_signal_stats(const struct fr_recorder *r, uint64_t ret[FR_SIGNAL_STACK__MAX]);
/* samples taken in the kernel that came with no kernel stack */
uint64_t fr_recorder_kernel_stacks_unread(const struct fr_recorder *r);
/* Python frames (python.h) */
struct fr_python_stats;
void fr_recorder_python_stats(const struct fr_recorder *r, struct fr_python_stats *ret);

void fr_recorder_cpu_stats(struct fr_recorder *r, unsigned cpu, struct fr_recorder_cpu_stats *ret);
/* Per source, summed over CPUs: records emitted and dropped in BPF, and
 * calls that could not be timed.  @dropped_per_cpu (an array of the
 * rings' CPU count, or NULL) gets the drops of each CPU. */
void fr_recorder_source_stats(struct fr_recorder *r, unsigned src, uint64_t *emitted,
			      uint64_t *dropped, uint64_t *untracked, uint64_t *dropped_per_cpu);

#endif
