/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc.skel.h"
#include "sources.h"
#include "syscall.skel.h"

struct fr_sources {
	struct proc_bpf *proc;
	struct syscall_bpf *syscall;
	bool enabled[FR_SRC__MAX];
};

static const char *const names[FR_SRC__MAX] = {
	[FR_SRC_PROC] = "proc",
	[FR_SRC_SYSCALL] = "syscall",
};

const char *fr_source_name(unsigned src)
{
	return src < FR_SRC__MAX ? names[src] : "unknown";
}

/* Wake the consumer once a ring is a quarter full; below that the drain
 * timer collects records in batches. */
static uint64_t wakeup_bytes(const struct fr_conf *c)
{
	return c->ring_size / 4;
}

/* The steps every source shares once its inputs are set: point its shared
 * maps at the daemon's rings and counters, load, attach. */
static int load_attach(struct bpf_object_skeleton *skel, struct bpf_map *rings,
		       struct bpf_map *counters, const struct fr_rings *r)
{
	int k = bpf_map__reuse_fd(rings, fr_rings_outer_fd(r));
	if (k < 0)
		return k;
	k = bpf_map__reuse_fd(counters, fr_rings_counters_fd(r));
	if (k < 0)
		return k;
	k = bpf_object__load_skeleton(skel);
	if (k < 0)
		return k;
	return bpf_object__attach_skeleton(skel);
}

static int start_proc(struct fr_sources *s, const struct fr_conf *c, const struct fr_rings *r,
		      pid_t self)
{
	struct proc_bpf *o = proc_bpf__open();
	int k;

	if (!o)
		return -errno;
	o->bss->self_tgid = (uint32_t)self;
	o->bss->wakeup_bytes = wakeup_bytes(c);
	k = load_attach(o->skeleton, o->maps.rings, o->maps.counters, r);
	if (k < 0) {
		proc_bpf__destroy(o);
		return k;
	}
	s->proc = o;
	return 0;
}

static void apply_syscall(struct syscall_bpf *o, const struct fr_conf *c)
{
	o->bss->wakeup_bytes = wakeup_bytes(c);
	o->data->threshold_ns = c->syscall_threshold_ns;
	_Static_assert(sizeof(o->bss->exclude) == sizeof(c->syscall_exclude), "exclude bitmap size");
	memcpy(o->bss->exclude, c->syscall_exclude, sizeof(o->bss->exclude));
}

static int start_syscall(struct fr_sources *s, const struct fr_conf *c, const struct fr_rings *r,
			 pid_t self)
{
	struct syscall_bpf *o = syscall_bpf__open();
	int k;

	if (!o)
		return -errno;
	o->bss->self_tgid = (uint32_t)self;
	/* set before load; the skeleton's .bss/.data are then the live
	 * kernel copies, which is how reload changes them */
	apply_syscall(o, c);
	k = load_attach(o->skeleton, o->maps.rings, o->maps.counters, r);
	if (k < 0) {
		syscall_bpf__destroy(o);
		return k;
	}
	s->syscall = o;
	return 0;
}

int fr_sources_start(const struct fr_conf *c, const struct fr_rings *r, pid_t self,
		     struct fr_sources **ret)
{
	struct fr_sources *s = calloc(1, sizeof(*s));
	int k;

	if (!s)
		return -ENOMEM;
	s->enabled[FR_SRC_PROC] = c->proc_enabled;
	s->enabled[FR_SRC_SYSCALL] = c->syscall_enabled;

	if (c->proc_enabled) {
		k = start_proc(s, c, r, self);
		if (k < 0)
			log_error_errno(k, "Failed to start source proc (exec, fork, exit): %m");
	}
	if (c->syscall_enabled) {
		k = start_syscall(s, c, r, self);
		if (k < 0)
			log_error_errno(k, "Failed to start source syscall (raw_tp sys_enter/sys_exit): %m");
	}
	*ret = s;
	return 0;
}

struct fr_sources *fr_sources_free(struct fr_sources *s)
{
	if (!s)
		return NULL;
	proc_bpf__destroy(s->proc);
	syscall_bpf__destroy(s->syscall);
	free(s);
	return NULL;
}

void fr_sources_apply(struct fr_sources *s, const struct fr_conf *c)
{
	if (s->syscall)
		apply_syscall(s->syscall, c);
	if (s->proc)
		s->proc->bss->wakeup_bytes = wakeup_bytes(c);
}

void fr_sources_state(const struct fr_sources *s, unsigned src, struct fr_source_state *ret)
{
	*ret = (struct fr_source_state){ .name = fr_source_name(src) };
	if (src >= FR_SRC__MAX)
		return;
	ret->enabled = s->enabled[src];
	ret->attached = src == FR_SRC_PROC ? s->proc != NULL : s->syscall != NULL;
}

unsigned fr_sources_attached(const struct fr_sources *s)
{
	return (s->proc != NULL) + (s->syscall != NULL);
}
