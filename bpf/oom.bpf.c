// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OOM kills: the victim the OOM killer marked, its RSS and memory cgroup. */
#include "emit.bpf.h"

/* mm->rss_stat before Linux 6.2: a struct of atomic counters.  Commit
 * f1a7941243c1 ("mm: convert mm's rss stats into percpu_counter", 6.2)
 * made it the array of percpu_counter that vmlinux.h has.  The flavour
 * below (libbpf drops the ___ suffix) matches the old layout, which is
 * what Debian 12's 6.1 kernel has; each layout's reads are relocated
 * only on a kernel that has it, the other branch being dead there.
 * Which one is told by the field (a struct, or an array): every
 * relocation's root type is mm_struct, which vmlinux has.  A test on a
 * type vmlinux lacks (bpf_core_type_exists(struct mm_rss_stat) on 6.2+)
 * makes libbpf look through the modules' BTF, which needs CAP_SYS_ADMIN:
 * the service, without it, failed to load the object. */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
};
struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

/* rss = file + anon + shmem pages (MM_FILEPAGES, MM_ANONPAGES,
 * MM_SHMEMPAGES): the shared totals, which the per-CPU (6.2+) or per-task
 * (before) caches make approximate by a batch */
static __always_inline __s64 rss_pages(struct mm_struct *mm)
{
	struct mm_struct___pre62 *old = (void *)mm;

	if (bpf_core_field_exists(old->rss_stat))
		return BPF_CORE_READ(old, rss_stat.count[0].counter) +
		       BPF_CORE_READ(old, rss_stat.count[1].counter) +
		       BPF_CORE_READ(old, rss_stat.count[3].counter);
	return BPF_CORE_READ(mm, rss_stat[0].count) + BPF_CORE_READ(mm, rss_stat[1].count) +
	       BPF_CORE_READ(mm, rss_stat[3].count);
}

SEC("tp_btf/mark_victim")
int BPF_PROG(fr_mark_victim, struct task_struct *task)
{
	struct fr_event_oom *e;
	struct mm_struct *mm;
	struct fr_slot slot;
	__s64 pages = 0;

	e = fr_reserve(sizeof(*e), FR_SRC_OOM, &slot);
	if (!e)
		return 0;
	fr_fill_hdr_task(&e->hdr, FR_EV_OOM, task, bpf_ktime_get_boot_ns());
	mm = BPF_CORE_READ(task, mm);
	if (mm)
		pages = rss_pages(mm);
	e->rss_pages = pages > 0 ? pages : 0;
	struct kernfs_node *kn = BPF_CORE_READ(task, cgroups,
					       subsys[bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id)],
					       cgroup, kn);
	e->memcg_id = BPF_CORE_READ(kn, id);
	if (bpf_probe_read_kernel_str(e->memcg_name, sizeof(e->memcg_name), BPF_CORE_READ(kn, name)) < 0)
		e->memcg_name[0] = 0;
	(void)slot;
	fr_submit_now(e);
	return 0;
}
