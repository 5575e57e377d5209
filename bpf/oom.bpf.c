// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* OOM kills: the victim the OOM killer marked, its RSS and memory cgroup. */
#include "emit.bpf.h"

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
	/* rss = file + anon + shmem pages (MM_FILEPAGES, MM_ANONPAGES,
	 * MM_SHMEMPAGES); percpu_counter totals, approximate by a batch */
	mm = BPF_CORE_READ(task, mm);
	if (mm) {
		pages += BPF_CORE_READ(mm, rss_stat[0].count);
		pages += BPF_CORE_READ(mm, rss_stat[1].count);
		pages += BPF_CORE_READ(mm, rss_stat[3].count);
	}
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
