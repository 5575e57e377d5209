/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 id -> path, as BPF's bpf_get_current_cgroup_id() reports ids.
 * The id is the kernfs node id, which open_by_handle_at() on the cgroup2
 * mount accepts as a file handle; the path of the opened directory is the
 * cgroup path.  Results (also failures) are cached, bounded.
 */
#ifndef FR_CGROUP_NAMES_H
#define FR_CGROUP_NAMES_H

#include <stdint.h>

struct fr_cgroup_names;

int fr_cgroup_names_new(struct fr_cgroup_names **ret);
struct fr_cgroup_names *fr_cgroup_names_free(struct fr_cgroup_names *c);
/* Returns the path ("/system.slice/foo.service") or NULL if unknown. */
const char *fr_cgroup_names_lookup(struct fr_cgroup_names *c, uint64_t id);
/* Path of the memory cgroup with kernfs id @id (the OOM victim's): on the
 * v1 memory hierarchy where there is one, else on cgroup2.  Returns @buf,
 * or NULL if it cannot be resolved (gone already). */
const char *fr_cgroup_names_memcg(struct fr_cgroup_names *c, uint64_t id, char *buf, size_t len);
/* The cgroup2 mount point's fd, or -1 without one. */
int fr_cgroup_names_mount_fd(const struct fr_cgroup_names *c);

#endif
