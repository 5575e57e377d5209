/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/macro.h"
#include "log.h"
#include "proc.skel.h"
#include "sources.h"
#include "syscall.skel.h"
#include "sched.skel.h"
#include "block.skel.h"
#include "oom.skel.h"
#include "signal.skel.h"
#include "tcp.skel.h"
#include "profile.skel.h"
#include "whoami.skel.h"
#include "taskwork.skel.h"
#include "sampler.h"
#include "switch-batch.h"

struct fr_sources {
	struct proc_bpf *proc;
	struct syscall_bpf *syscall;
	struct sched_bpf *sched;
	struct block_bpf *block;
	struct oom_bpf *oom;
	struct signal_bpf *signal;
	struct tcp_bpf *tcp;
	struct profile_bpf *profile;
	struct fr_sampler *sampler;
	struct fr_switch_batches *batches; /* the sched source's */
	bool enabled[FR_SRC__MAX];
	const struct fr_rings *rings; /* for sources started on reload */
	pid_t self;
	pid_t helper; /* the stack parser's: fr_sources_set_helper() */
};

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
	struct bpf_map *py;
	int k = bpf_map__reuse_fd(rings, fr_rings_outer_fd(r));
	if (k < 0)
		return k;
	k = bpf_map__reuse_fd(counters, fr_rings_counters_fd(r));
	if (k < 0)
		return k;
	/* the objects that walk Python frames (python.bpf.h) share these */
	const struct { const char *name; int fd; } shared[] = {
		{ "py_exes", fr_rings_py_exes_fd(r) },
		{ "py_seen", fr_rings_py_seen_fd(r) },
		{ "py_threads", fr_rings_py_threads_fd(r) },
	};
	for (size_t i = 0; i < ELEMENTSOF(shared); i++) {
		py = bpf_object__find_map_by_name(*skel->obj, shared[i].name);
		if (py && (k = bpf_map__reuse_fd(py, shared[i].fd)) < 0)
			return k;
	}
	k = bpf_object__load_skeleton(skel);
	if (k < 0)
		return k;
	return bpf_object__attach_skeleton(skel);
}

static void apply_none(void *o, const struct fr_conf *c)
{
}

static void apply_syscall(struct syscall_bpf *o, const struct fr_conf *c)
{
	o->data->threshold_ns = c->syscall_threshold_ns;
	_Static_assert(sizeof(o->bss->exclude) == sizeof(c->syscall_exclude), "exclude bitmap size");
	memcpy(o->bss->exclude, c->syscall_exclude, sizeof(o->bss->exclude));
}

/* Whether the kernel's BTF has struct @type with member @member. */
static bool btf_has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (unsigned i = 0; t && i < btf_vlen(t); i++)
		if (strcmp(btf__name_by_offset(btf, m[i].name_off), member) == 0)
			return true;
	return false;
}

/* The program reads run-queue waits from the kernel's own accounting
 * (sched.bpf.c): it needs CONFIG_SCHED_INFO and CONFIG_FAIR_GROUP_SCHED. */
static bool runq_supported(void)
{
	static int supported = -1;

	if (supported < 0) {
		struct btf *btf = btf__load_vmlinux_btf();
		supported = btf && btf_has_member(btf, "sched_info", "last_queued") &&
			    btf_has_member(btf, "sched_entity", "cfs_rq");
		btf__free(btf);
	}
	return supported;
}

/* libbpf's messages while the probe below loads: none (a refusal is
 * the expected answer on some kernels, not a warning) */
static int print_nothing(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* The line of a verifier log that says why it refused: the last that is
 * not an instruction, a register state or the closing statistics. */
static void refusal_reason(const char *log, char *ret, size_t size)
{
	static const char *const skip[] = { "processed ", "verification time", "stack depth", "func ", "kfunc ", "-- " };
	const char *p = log, *e;

	ret[0] = '\0';
	for (; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		bool other = e == p || (*p >= '0' && *p <= '9') || *p == ';' || *p == ' ';

		for (size_t i = 0; i < ELEMENTSOF(skip) && !other; i++)
			other = strncmp(p, skip[i], strlen(skip[i])) == 0;
		if (other)
			continue;
		snprintf(ret, size, "%.*s", (int)MIN((size_t)(e - p), size - 1), p);
	}
}

/* BPF task work (Linux 6.18), which copies an off-CPU wait's user stack
 * (sched.bpf.c): whether the kernel has it, and whether it lets the switch
 * tracepoint use it (taskwork.bpf.c: loaded, never attached).  Asked once;
 * task_work_refusal says why the kernel refused, when it has it. */
enum task_work { TASK_WORK_UNKNOWN, TASK_WORK_MISSING, TASK_WORK_REFUSED, TASK_WORK_OK };
static char task_work_refusal[160];

static enum task_work task_work_state(void)
{
	static enum task_work state = TASK_WORK_UNKNOWN;
	struct taskwork_bpf *o;
	libbpf_print_fn_t old;
	struct btf *btf;
	char *log;
	int k;

	if (state != TASK_WORK_UNKNOWN)
		return state;
	btf = btf__load_vmlinux_btf();
	state = btf && btf__find_by_name_kind(btf, "bpf_task_work_schedule_resume_impl", BTF_KIND_FUNC) > 0
			? TASK_WORK_OK
			: TASK_WORK_MISSING;
	btf__free(btf);
	if (state == TASK_WORK_MISSING)
		return state;
	o = taskwork_bpf__open();
	if (!o) {
		snprintf(task_work_refusal, sizeof(task_work_refusal), "cannot open the probe: %s", strerror(errno));
		return (state = TASK_WORK_REFUSED);
	}
	log = calloc(1, 64 << 10);
	if (log)
		(void)bpf_program__set_log_buf(o->progs.fr_task_work_probe, log, 64 << 10);
	old = libbpf_set_print(print_nothing);
	k = taskwork_bpf__load(o);
	(void)libbpf_set_print(old);
	if (k < 0) {
		refusal_reason(log ? log : "", task_work_refusal, sizeof(task_work_refusal));
		if (!task_work_refusal[0])
			snprintf(task_work_refusal, sizeof(task_work_refusal), "%s", strerror(-k));
		state = TASK_WORK_REFUSED;
	}
	taskwork_bpf__destroy(o);
	free(log);
	return state;
}

static void apply_sched(struct sched_bpf *o, const struct fr_conf *c)
{
	static bool told_task_work;

	if (c->runq_enabled && !runq_supported())
		log_warning("Run-queue latency (sources.sched.runq) is not recorded: this kernel lacks "
			    "CONFIG_SCHED_INFO or CONFIG_FAIR_GROUP_SCHED, whose accounting it is read from.");
	/* once: the kernel does not change under the daemon */
	if (c->offcpu_enabled && c->offcpu_stacks && !told_task_work) {
		if (task_work_state() == TASK_WORK_MISSING)
			log_notice("Off-CPU user stacks (sources.sched.offcpu_stacks) end at the innermost frame: "
				   "this kernel lacks BPF task work (Linux 6.18), which copies a sleeping thread's "
				   "user stack from the thread itself; such records are counted as no_task_work "
				   "in frctl status.");
		else if (task_work_state() == TASK_WORK_REFUSED)
			log_notice("Off-CPU user stacks (sources.sched.offcpu_stacks) end at the innermost frame: "
				   "this kernel has BPF task work but refuses it from the sched_switch tracepoint "
				   "(its verifier: \"%s\"); such records are counted as no_task_work in frctl "
				   "status.",
				   task_work_refusal);
		told_task_work = task_work_state() != TASK_WORK_OK;
	}
	o->data->offcpu_enabled = c->offcpu_enabled;
	o->data->offcpu_threshold_ns = c->offcpu_threshold_ns;
	o->data->offcpu_stacks = c->offcpu_stacks;
	o->data->wakers = c->wakers;
	/* off: not attached, no program run per wakeup; before load, for
	 * the skeleton's attach, after it (a reload) by hand */
	if (bpf_program__fd(o->progs.fr_waking) < 0)
		bpf_program__set_autoattach(o->progs.fr_waking, c->wakers);
	else if (!c->wakers && o->links.fr_waking)
		o->links.fr_waking = (bpf_link__destroy(o->links.fr_waking), NULL);
	else if (c->wakers && !o->links.fr_waking) {
		o->links.fr_waking = bpf_program__attach(o->progs.fr_waking);
		if (!o->links.fr_waking) {
			log_warning_errno(-errno, "Failed to attach the wakers' program (sources.sched.wakers): %m");
			o->links.fr_waking = NULL;
		}
	}
	o->data->runq_enabled = c->runq_enabled;
	o->data->runq_threshold_ns = c->runq_threshold_ns;
	o->bss->full = c->sched_full; /* zero-initialised: .bss */
	if (++o->data->runq_epoch == 0) /* 0 is a task never stamped */
		o->data->runq_epoch = 1;
}

static void apply_block(struct block_bpf *o, const struct fr_conf *c)
{
	o->data->threshold_ns = c->block_threshold_ns;
}

static void apply_signal(struct signal_bpf *o, const struct fr_conf *c)
{
	o->data->sigmask = c->signal_mask;
}

static void prepare_none(void *o, const struct fr_rings *r)
{
}

/* One switch batch per CPU; the flush program is run, not attached. */
static void prepare_sched(struct sched_bpf *o, const struct fr_rings *r)
{
	(void)bpf_map__set_max_entries(o->maps.switch_batch, fr_rings_ncpu(r));
	(void)bpf_map__set_max_entries(o->maps.offcpu_pending, fr_rings_ncpu(r) * FR_OFFCPU_SLOTS);
	o->rodata->have_task_work = task_work_state() == TASK_WORK_OK;
	bpf_program__set_autoattach(o->progs.fr_switch_flush, false);
}

/* The functions of one skeleton type: start (open, set the inputs -- before
 * load they go into the object; after load the skeleton's .bss/.data are
 * the live kernel copies, which is how reload changes them -- load,
 * attach), stop, attached, and reapply (the inputs again, on reload).
 * PREPARE: what is set once, before load. */
#define DEFINE_SOURCE(NAME, APPLY, PREPARE)                                                 \
	static void apply_##NAME##_inputs(struct NAME##_bpf *o, const struct fr_conf *c)     \
	{                                                                                    \
		o->bss->wakeup_bytes = wakeup_bytes(c);                                      \
		APPLY(o, c);                                                                 \
	}                                                                                    \
	static int start_##NAME(struct fr_sources *s, const struct fr_conf *c,              \
				const struct fr_rings *r, pid_t self)                        \
	{                                                                                    \
		struct NAME##_bpf *o = NAME##_bpf__open();                                   \
		int k;                                                                       \
		if (!o)                                                                      \
			return -errno;                                                       \
		o->bss->self_tgid = (uint32_t)self;                                          \
		o->bss->helper_tgid = (uint32_t)s->helper;                                   \
		apply_##NAME##_inputs(o, c);                                                 \
		PREPARE(o, r);                                                               \
		k = load_attach(o->skeleton, o->maps.rings, o->maps.counters, r);            \
		if (k < 0) {                                                                 \
			NAME##_bpf__destroy(o);                                              \
			return k;                                                            \
		}                                                                            \
		s->NAME = o;                                                                 \
		return 0;                                                                    \
	}                                                                                    \
	static void stop_##NAME(struct fr_sources *s)                                        \
	{                                                                                    \
		s->NAME = (NAME##_bpf__destroy(s->NAME), NULL);                              \
	}                                                                                    \
	static bool attached_##NAME(const struct fr_sources *s)                              \
	{                                                                                    \
		return s->NAME != NULL;                                                      \
	}                                                                                    \
	static void reapply_##NAME(struct fr_sources *s, const struct fr_conf *c)            \
	{                                                                                    \
		if (s->NAME)                                                                 \
			apply_##NAME##_inputs(s->NAME, c);                                   \
	}

DEFINE_SOURCE(proc, apply_none, prepare_none)
DEFINE_SOURCE(syscall, apply_syscall, prepare_none)
DEFINE_SOURCE(sched, apply_sched, prepare_sched)
DEFINE_SOURCE(block, apply_block, prepare_none)
DEFINE_SOURCE(oom, apply_none, prepare_none)
DEFINE_SOURCE(signal, apply_signal, prepare_none)
DEFINE_SOURCE(tcp, apply_none, prepare_none)
DEFINE_SOURCE(profile, apply_none, prepare_none)

/* The sched program, and the daemon's view of its switch batches. */
static int start_switches(struct fr_sources *s, const struct fr_conf *c, const struct fr_rings *r, pid_t self)
{
	int k = start_sched(s, c, r, self);

	if (k < 0)
		return k;
	k = fr_switch_batches_new(bpf_map__fd(s->sched->maps.switch_batch),
				  bpf_program__fd(s->sched->progs.fr_switch_flush), fr_rings_ncpu(r), &s->batches);
	if (k < 0) {
		s->sched = (sched_bpf__destroy(s->sched), NULL);
		return k;
	}
	return 0;
}

/* What the CPUs hold into the rings, then detach; switches between the
 * two are not recorded, as after detaching. */
static void stop_switches(struct fr_sources *s)
{
	(void)fr_switch_batches_flush(s->batches);
	stop_sched(s);
	s->batches = fr_switch_batches_free(s->batches);
}

/* The profile program runs on per-CPU perf events, not a tracepoint. */
static int start_sample(struct fr_sources *s, const struct fr_conf *c, const struct fr_rings *r, pid_t self)
{
	int k = start_profile(s, c, r, self);

	if (k < 0)
		return k;
	k = fr_sampler_attach(s->profile->progs.fr_sample, fr_rings_ncpu(r), c->sample_hz, &s->sampler);
	if (k < 0) {
		s->profile = (profile_bpf__destroy(s->profile), NULL);
		return k;
	}
	return 0;
}

static void stop_sample(struct fr_sources *s)
{
	s->sampler = fr_sampler_free(s->sampler);
	stop_profile(s);
}

int fr_kernel_tgid(pid_t *ret)
{
	struct whoami_bpf *o = whoami_bpf__open_and_load();
	int k;

	if (!o)
		return -errno;
	/* no BPF_F_TEST_RUN_ON_CPU: the program runs in this task */
	k = bpf_prog_test_run_opts(bpf_program__fd(o->progs.fr_whoami), NULL);
	if (k >= 0 && o->bss->tgid == 0)
		k = -ENODATA;
	if (k >= 0)
		*ret = (pid_t)o->bss->tgid;
	whoami_bpf__destroy(o);
	return k < 0 ? k : 0;
}

/* Whether configuration @c asks for each source. */
static bool want_proc(const struct fr_conf *c) { return c->proc_enabled; }
static bool want_syscall(const struct fr_conf *c) { return c->syscall_enabled; }
/* (nothing to record without one of its modes) */
static bool want_sched(const struct fr_conf *c)
{
	return c->sched_enabled && (c->offcpu_enabled || c->runq_enabled || c->sched_full);
}
static bool want_block(const struct fr_conf *c) { return c->block_enabled; }
static bool want_oom(const struct fr_conf *c) { return c->oom_enabled; }
static bool want_signal(const struct fr_conf *c) { return c->signal_enabled; }
static bool want_tcp(const struct fr_conf *c) { return c->tcp_enabled; }
static bool want_sample(const struct fr_conf *c) { return c->sample_enabled; }

/* Every source, once: a new one is a skeleton, a DEFINE_SOURCE line (or
 * its own start and stop) and an entry here, besides enum fr_source
 * (bpf/event.h) and its settings (lib/conf.c). */
/* A new sampling frequency: the program stays loaded; only its perf
 * events change. */
static bool retune_sample(struct fr_sources *s, const struct fr_conf *c)
{
	struct fr_sampler *n;
	int k;

	if (fr_sampler_hz(s->sampler) == (unsigned)c->sample_hz)
		return false;
	k = fr_sampler_attach(s->profile->progs.fr_sample, fr_rings_ncpu(s->rings), c->sample_hz, &n);
	if (k < 0) {
		log_error_errno(k, "Failed to change the sampling frequency to %d Hz, keeping %u Hz: %m", c->sample_hz,
				fr_sampler_hz(s->sampler));
		return false;
	}
	fr_sampler_free(s->sampler);
	s->sampler = n;
	log_info("Sampling at %d Hz.", c->sample_hz);
	return true;
}

static const struct source {
	const char *name; /* status, logs */
	const char *what; /* its hooks, for the log line when it cannot start */
	bool (*wanted)(const struct fr_conf *c);
	int (*start)(struct fr_sources *s, const struct fr_conf *c, const struct fr_rings *r, pid_t self);
	void (*stop)(struct fr_sources *s);
	bool (*attached)(const struct fr_sources *s);
	/* its tunables again on reload */
	void (*reapply)(struct fr_sources *s, const struct fr_conf *c);
	/* on reload, attached and still wanted: what needs more than its
	 * tunables (the sampler's frequency: new perf events); whether it
	 * changed.  NULL: nothing. */
	bool (*retune)(struct fr_sources *s, const struct fr_conf *c);
} sources[FR_SRC__MAX] = {
	[FR_SRC_PROC] = { "proc", "exec, fork, exit", want_proc, start_proc, stop_proc, attached_proc, reapply_proc },
	[FR_SRC_SYSCALL] = { "syscall", "raw_tp sys_enter/sys_exit", want_syscall, start_syscall, stop_syscall,
			     attached_syscall, reapply_syscall },
	[FR_SRC_SCHED] = { "sched", "tp_btf sched_switch", want_sched, start_switches, stop_switches, attached_sched,
			   reapply_sched },
	[FR_SRC_BLOCK] = { "block", "tp_btf block_rq_issue/block_rq_complete", want_block, start_block, stop_block,
			   attached_block, reapply_block },
	[FR_SRC_OOM] = { "oom", "tp_btf mark_victim", want_oom, start_oom, stop_oom, attached_oom, reapply_oom },
	[FR_SRC_SIGNAL] = { "signal", "tp_btf signal_generate", want_signal, start_signal, stop_signal,
			    attached_signal, reapply_signal },
	[FR_SRC_TCP] = { "tcp", "tp_btf tcp_retransmit_skb/tcp_send_reset/tcp_receive_reset", want_tcp, start_tcp,
			 stop_tcp, attached_tcp, reapply_tcp },
	[FR_SRC_SAMPLE] = { "sample", "perf_event CPU sampling", want_sample, start_sample, stop_sample,
			    attached_profile, reapply_profile, retune_sample },
};

static int start_source(struct fr_sources *s, unsigned src, const struct fr_conf *c)
{
	int k = sources[src].start(s, c, s->rings, s->self);

	if (k < 0)
		log_error_errno(k, "Failed to start source %s (%s): %m", sources[src].name, sources[src].what);
	return k;
}

static bool attached(const struct fr_sources *s, unsigned src)
{
	return src < FR_SRC__MAX && sources[src].attached(s);
}

int fr_sources_start(const struct fr_conf *c, const struct fr_rings *r, pid_t self,
		     struct fr_sources **ret)
{
	struct fr_sources *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->rings = r;
	s->self = self;
	for (unsigned i = 0; i < FR_SRC__MAX; i++) {
		s->enabled[i] = sources[i].wanted(c);
		if (s->enabled[i])
			(void)start_source(s, i, c);
	}
	*ret = s;
	return 0;
}

struct fr_sources *fr_sources_free(struct fr_sources *s)
{
	if (!s)
		return NULL;
	for (unsigned i = 0; i < FR_SRC__MAX; i++)
		if (attached(s, i))
			sources[i].stop(s);
	free(s);
	return NULL;
}

unsigned fr_sources_update(struct fr_sources *s, const struct fr_conf *c)
{
	unsigned changed = 0;

	for (unsigned i = 0; i < FR_SRC__MAX; i++) {
		bool want = sources[i].wanted(c);

		s->enabled[i] = want;
		if (!want && attached(s, i)) {
			sources[i].stop(s);
			log_info("Source %s stopped.", sources[i].name);
			changed |= 1u << i;
		} else if (want && !attached(s, i)) {
			/* newly enabled, or failed before: (re)try */
			if (start_source(s, i, c) == 0) {
				log_info("Source %s started.", sources[i].name);
				changed |= 1u << i;
			}
		} else if (want && sources[i].retune && sources[i].retune(s, c))
			changed |= 1u << i;
	}
	fr_sources_apply(s, c);
	return changed;
}

void fr_sources_apply(struct fr_sources *s, const struct fr_conf *c)
{
	for (unsigned i = 0; i < FR_SRC__MAX; i++)
		sources[i].reapply(s, c);
}

void fr_sources_state(const struct fr_sources *s, unsigned src, struct fr_source_state *ret)
{
	*ret = (struct fr_source_state){ .name = fr_source_name(src) };
	if (src >= FR_SRC__MAX)
		return;
	ret->enabled = s->enabled[src];
	ret->attached = attached(s, src);
}

const char *fr_sources_sampler_event(const struct fr_sources *s, unsigned *hz)
{
	*hz = s ? fr_sampler_hz(s->sampler) : 0;
	return s ? fr_sampler_event(s->sampler) : NULL;
}

/* The sum of a PERCPU_ARRAY of one u64 @fd over the CPUs. */
static uint64_t percpu_sum(int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu > 0 ? ncpu : 1], sum = 0;
	uint32_t zero = 0;

	if (ncpu > 0 && bpf_map_lookup_elem(fd, &zero, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	return sum;
}

uint64_t fr_sources_py_drops(const struct fr_sources *s)
{
	return (s->profile ? percpu_sum(bpf_map__fd(s->profile->maps.py_drops)) : 0) +
	       (s->sched ? percpu_sum(bpf_map__fd(s->sched->maps.py_drops)) : 0);
}

uint64_t fr_sources_waker_drops(const struct fr_sources *s)
{
	int n = libbpf_num_possible_cpus();
	uint32_t zero = 0;
	uint64_t sum = 0, *v;

	if (!s || !s->sched || n <= 0)
		return 0;
	v = calloc((size_t)n, sizeof(*v));
	if (v && bpf_map_lookup_elem(bpf_map__fd(s->sched->maps.waker_drops), &zero, v) == 0)
		for (int i = 0; i < n; i++)
			sum += v[i];
	free(v);
	return sum;
}

unsigned fr_sources_flush(struct fr_sources *s)
{
	return s ? fr_switch_batches_flush(s->batches) : 0;
}

bool fr_sources_hold_back(const struct fr_sources *s)
{
	return s && s->batches && s->sched && s->sched->bss->full;
}

int fr_sources_block_hist_fd(const struct fr_sources *s)
{
	return s && s->block ? bpf_map__fd(s->block->maps.lat_hist) : -1;
}

unsigned fr_sources_attached(const struct fr_sources *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < FR_SRC__MAX; i++)
		n += attached(s, i);
	return n;
}

const char *fr_source_name(unsigned src)
{
	return src < FR_SRC__MAX ? sources[src].name : "unknown";
}

void fr_sources_set_helper(struct fr_sources *s, pid_t pid)
{
	if (pid == s->helper)
		return;
	s->helper = pid;
	if (s->profile)
		s->profile->bss->helper_tgid = (uint32_t)pid;
	if (s->sched)
		s->sched->bss->helper_tgid = (uint32_t)pid;
}
