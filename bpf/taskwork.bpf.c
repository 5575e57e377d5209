// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whether this kernel lets the switch tracepoint schedule BPF task work,
 * which sched.bpf.c uses to copy an off-CPU wait's user stack from the
 * thread itself.  The kfunc's name in the kernel's BTF is not enough: a
 * 6.18 build seen here has it and its verifier refuses the call from a
 * tp_btf program ("sleepable callback in a program that is not
 * sleepable"), which made the whole sched source fail to load.  So the
 * daemon loads this program once, never attached, before the sched
 * object: the same call from the same tracepoint, its callback doing
 * what offcpu_copy_user() does that the verifier weighs (a faulting user
 * copy).  If the kernel refuses it, the sched object is loaded without
 * task work (have_task_work false) and the daemon says why.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct probe_work {
	struct bpf_task_work tw;
	__u64 word;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_work);
} probe_work SEC(".maps");

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
					      int (*callback)(struct bpf_map *, void *, void *),
					      void *aux__prog) __weak __ksym;

static int probe_copy(struct bpf_map *map, void *key, void *value)
{
	struct probe_work *w = value;

	bpf_copy_from_user(&w->word, sizeof(w->word), (const void *)8);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fr_task_work_probe, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	struct probe_work *w = bpf_map_lookup_elem(&probe_work, &zero);

	if (w)
		bpf_task_work_schedule_resume_impl(next, &w->tw, &probe_work, probe_copy, NULL);
	return 0;
}
