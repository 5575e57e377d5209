// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Block I/O requests slower than threshold_ns, issue to completion, with
 * the issuing task, device, op, sector and size.  Requests are not tasks:
 * in-flight state lives in a hash keyed by the request pointer, bounded
 * (a full table counts the request as untracked).
 */
#include "emit.bpf.h"

struct fr_rq_start {
	__u64 ts;
	__u64 cgroup_id;
	__u32 pid, tid;
	char comm[FR_COMM_LEN];
};

/* 8192 in-flight requests: far above any queue depth of a host's disks */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct fr_rq_start);
} rq_start SEC(".maps");

/* 256 disks per host is plenty; beyond, requests are still recorded when
 * slow, only not in a histogram */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct fr_lat_hist);
} lat_hist SEC(".maps");

/* inputs */
__u64 threshold_ns = 50000000;

static __always_inline __u32 log2_us(__u64 ns)
{
	__u64 us = ns / 1000;
	__u32 r = 0;

	/* no clz in BPF: halve, bounded */
	for (int i = 0; i < FR_LAT_SLOTS - 1 && us > 1; i++) {
		us >>= 1;
		r++;
	}
	return r;
}

static __always_inline void count_latency(__u32 dev, __u64 ns)
{
	static const struct fr_lat_hist zero;
	struct fr_lat_hist *h = bpf_map_lookup_elem(&lat_hist, &dev);
	__u32 slot = log2_us(ns);

	if (!h) {
		bpf_map_update_elem(&lat_hist, &dev, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&lat_hist, &dev);
		if (!h)
			return;
	}
	if (slot < FR_LAT_SLOTS)
		h->slots[slot]++;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(fr_rq_issue, struct request *rq)
{
	__u64 key = (__u64)rq, pid_tgid = bpf_get_current_pid_tgid();
	struct fr_rq_start v = {};
	struct fr_counters *c;

	v.ts = bpf_ktime_get_boot_ns();
	v.cgroup_id = bpf_get_current_cgroup_id();
	v.pid = pid_tgid >> 32;
	v.tid = (__u32)pid_tgid;
	bpf_get_current_comm(v.comm, sizeof(v.comm));
	if (bpf_map_update_elem(&rq_start, &key, &v, BPF_ANY)) {
		c = fr_counters(FR_SRC_BLOCK);
		if (c)
			c->untracked++;
	}
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(fr_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_boot_ns();
	struct fr_rq_start *v = bpf_map_lookup_elem(&rq_start, &key);
	struct fr_event_block *e;
	struct gendisk *disk;
	__u32 dev;
	struct fr_slot slot;

	if (!v)
		return 0;
	disk = BPF_CORE_READ(rq, q, disk);
	dev = (BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
	count_latency(dev, now - v->ts);
	if (now - v->ts < threshold_ns || v->pid == self_tgid) {
		bpf_map_delete_elem(&rq_start, &key);
		return 0;
	}
	e = fr_reserve(sizeof(*e), FR_SRC_BLOCK, &slot);
	if (e) {
		e->hdr.ts = v->ts;
		e->hdr.cgroup_id = v->cgroup_id;
		e->hdr.pid = v->pid;
		e->hdr.tid = v->tid;
		e->hdr.type = FR_EV_BLOCK;
		e->hdr.flags = 0;
		e->hdr.pad = 0;
		__builtin_memcpy(e->hdr.comm, v->comm, sizeof(e->hdr.comm));
		e->duration_ns = now - v->ts;
		e->sector = BPF_CORE_READ(rq, __sector);
		e->dev = dev;
		e->bytes = nr_bytes;
		e->op = BPF_CORE_READ(rq, cmd_flags) & 0xff; /* REQ_OP_MASK */
		e->error = error;
		fr_submit(e, &slot);
	}
	bpf_map_delete_elem(&rq_start, &key);
	return 0;
}
