/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel-side helpers every flightrec BPF object shares: the per-CPU ring
 * buffers, the loss counters, and the reserve/submit pair that counts every
 * record.  The maps are created once by the daemon (daemon/rings.c) and
 * reused by every object with bpf_map__reuse_fd(), so all sources feed the
 * same rings and counters.
 */
#ifndef FR_EMIT_BPF_H
#define FR_EMIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* One ring per CPU; the real rings and their size come from the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, 4096);
	});
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FR_SRC__MAX);
	__type(key, __u32);
	__type(value, struct fr_counters);
} counters SEC(".maps");

/* inputs (set by the daemon through the skeleton's .bss, changeable live) */
__u32 self_tgid;        /* flightrecd itself: never recorded */
__u32 helper_tgid;      /* flightrec-parse, its stack parser: its stacks are
			 * not taken (samples, waits), each of which would
			 * cost it another exchange (0: none runs) */
__u64 wakeup_bytes;     /* wake the consumer only once a ring holds this much */

static __always_inline bool fr_is_self(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == self_tgid;
}

static __always_inline struct fr_counters *fr_counters(__u32 src)
{
	return bpf_map_lookup_elem(&counters, &src);
}

/* Where a reserved record goes, and how many its source has emitted on
 * this CPU (counting it): see fr_submit(). */
struct fr_slot {
	void *ring;
	__u64 n;
};

/* Bulk records (CPU samples: the biggest, ~17 KiB with their stack copy,
 * and statistics: losing some loses no event; and the batched switch
 * records of full scheduler recording) leave the last 1/2^this of
 * each ring to every other record.  A daemon that stalls (overloaded,
 * stopped, swapped out) with its rings full of samples still has room
 * for the fatal signal, the OOM kill, the exec that explain the stall:
 * an eighth of the shipped 1 MiB ring is 7 signal records with their
 * user stacks, and samples keep 7/8 of it (the daemon is woken at 1/4). */
#define FR_BULK_HEADROOM_SHIFT 3

/* Would @size more bytes of bulk records take ring @rb into its headroom? */
static __always_inline bool fr_ring_bulk_full(void *rb, __u64 size)
{
	__u64 ring = bpf_ringbuf_query(rb, BPF_RB_RING_SIZE);

	return bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) + size > ring - (ring >> FR_BULK_HEADROOM_SHIFT);
}

/* A bulk record of @src that will not fit above this CPU's headroom,
 * checked before the work of making it (and of the records that would
 * go before it): counted as emitted and dropped when so. */
static __always_inline bool fr_bulk_refused(__u32 size, __u32 src)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	struct fr_counters *c;

	if (rb && !fr_ring_bulk_full(rb, size))
		return false;
	c = fr_counters(src);
	if (c) {
		c->emitted++;
		c->dropped++;
	}
	return true;
}

static __always_inline void *fr_reserve_in(__u32 size, __u32 src, struct fr_slot *slot, bool bulk)
{
	struct fr_counters *c = fr_counters(src);
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb, *e = NULL;

	slot->n = 0;
	if (c)
		slot->n = ++c->emitted;
	rb = bpf_map_lookup_elem(&rings, &cpu);
	if (rb && bulk && fr_ring_bulk_full(rb, size))
		rb = NULL; /* counted as dropped, below */
	if (rb)
		e = bpf_ringbuf_reserve(rb, size, 0);
	if (!e) {
		if (c)
			c->dropped++;
		return NULL;
	}
	slot->ring = rb;
	return e;
}

/* Reserve @size bytes on this CPU's ring.  Counts the attempt and, on
 * failure, the drop: a NULL return has already been accounted for. */
static __always_inline void *fr_reserve(__u32 size, __u32 src, struct fr_slot *slot)
{
	return fr_reserve_in(size, src, slot, false);
}

/* The same for a bulk record: it fails, counted, when the ring has no
 * more than the headroom left (FR_BULK_HEADROOM_SHIFT). */
static __always_inline void *fr_reserve_bulk(__u32 size, __u32 src, struct fr_slot *slot)
{
	return fr_reserve_in(size, src, slot, true);
}

/* Reserve @size bytes on this CPU's ring for an event that is no record
 * of its own (the daemon folds it into another): not counted as any
 * source's; a failure adds one to *@drops' element (a PERCPU_ARRAY of one
 * __u64).  Submit it with BPF_RB_NO_WAKEUP: the record it goes into wakes
 * the consumer if need be. */
static __always_inline void *fr_reserve_aux(__u32 size, void *drops)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	void *rb = bpf_map_lookup_elem(&rings, &cpu), *e = NULL;
	__u64 *d;

	if (rb)
		e = bpf_ringbuf_reserve(rb, size, 0);
	if (!e && (d = bpf_map_lookup_elem(drops, &zero)))
		(*d)++;
	return e;
}

/* How often fr_submit() looks at how full the ring is: every that many
 * records of a source on a CPU.  The look costs ~20 ns (bpf_stats), a
 * tenth of a context switch record; 16 records are ~1 KiB, against a
 * wakeup threshold of a quarter of the ring. */
#define FR_WAKE_CHECK_EVERY 16

/* Submit without waking the consumer (it drains on a timer) unless the ring
 * is filling up: a wakeup per record costs ~1 us per event (KERNEL-FACTS). */
static __always_inline void fr_submit(void *e, const struct fr_slot *slot)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if ((slot->n & (FR_WAKE_CHECK_EVERY - 1)) == 0 &&
	    bpf_ringbuf_query(slot->ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* Header of a record about @t, which need not be the current task, at
 * time @ts.  @t is a BTF pointer (every caller is a tp_btf program): its
 * fields are read directly, CO-RE relocated, not through a helper call
 * each (the sched_switch program spent most of its time in those).  The
 * whole comm is copied: the kernel keeps it NUL-terminated and the daemon
 * reads it up to the NUL. */
static __always_inline void fr_fill_hdr_task(struct fr_event_hdr *h, __u16 type, struct task_struct *t, __u64 ts)
{
	h->ts = ts;
	h->cgroup_id = t->cgroups->dfl_cgrp->kn->id;
	h->pid = t->tgid;
	h->tid = t->pid;
	h->type = type;
	h->flags = 0;
	h->pad = 0;
	__builtin_memcpy(h->comm, t->comm, sizeof(h->comm));
}

/* For rare events someone may act on at once (OOM kills): wake the
 * consumer now instead of at the next drain. */
static __always_inline void fr_submit_now(void *e)
{
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

static __always_inline void fr_fill_hdr(struct fr_event_hdr *h, __u16 type)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	h->ts = bpf_ktime_get_boot_ns();
	h->cgroup_id = bpf_get_current_cgroup_id();
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->type = type;
	h->flags = 0;
	h->pad = 0;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

#endif
