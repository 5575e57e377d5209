// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Scheduler latency, all from sched_switch.  Off-CPU: a task that blocks
 * (switched out not runnable) is stamped; when it next runs, the interval
 * is reported if longer than offcpu_threshold_ns.  Run queue: when a task
 * gets the CPU, the time it waited for one since it last had one is
 * reported if longer than runq_threshold_ns.  That wait the kernel keeps
 * already (CONFIG_SCHED_INFO: sched_info.run_delay, last_queued; the
 * tracepoint runs before sched_info_switch() counts this arrival), so no
 * program runs on wakeups: the wakeup programs that stamped a task as it
 * became runnable cost as much as the switch program itself.  Per-task
 * state in task storage; the record's time is the start of the interval.
 * An off-CPU record also says which system call the task was blocked in,
 * read from its saved user registers only when the record is made, so
 * that with the syscall source off slow blocking calls stay visible at no
 * cost per system call.  Full mode records every switch besides, in
 * per-CPU batches (struct fr_switch_batch in event.h).
 *
 * Off-CPU stacks (struct fr_event_offcpu).  Only a wait over the
 * threshold pays for them, at the switch that ends it, when the task is
 * about to run again but has not yet: its kernel stack is still the one
 * it slept in (bpf_get_task_stack on a task off its CPU), and its user
 * registers are where it entered the kernel.  Its user stack cannot be
 * read there: the memory mapped is the previous task's.  So the copy is
 * left to the task itself, as BPF task work (bpf_task_work_schedule_
 * resume, Linux 6.18) that runs when it next returns to user space,
 * microseconds later, before any of its user code: the stack is still
 * the one it entered the kernel with, and the callback, in the task's own
 * context and allowed to fault, copies it and writes the record.  The
 * alternatives cost more where it matters (every task, not only those
 * over the threshold): copying each task's stack as it blocks, since
 * which wait will be long is known only at its end, or a program on every
 * system call exit.  Kernel threads, and kernels without task work, get
 * the kernel stack and the user registers (the innermost user frame).
 */
#include "emit.bpf.h"
#include "clock-filter.h"
#include "stack-budget.bpf.h"
#include "ustack.bpf.h"
#include "python.bpf.h"

/* include/linux/sched.h: a kernel thread has no user registers; an
 * io_uring worker has a copy of its creator's, and never returns to user
 * space (task work would run only when it exits) */
#define PF_KTHREAD 0x00200000
#define PF_IO_WORKER 0x00000010

struct fr_sched_state {
	__u64 offcpu_ts; /* blocked since; 0: not blocked */
	__u64 run_delay; /* its sched_info run delay when it last got a CPU */
	__u32 arrived;   /* run_delay is set: the runq_epoch it was set in */
	__u32 state;     /* the task state it blocked in (prev_state) */
	__u64 waker_for; /* the offcpu_ts whose waker was written (fr_waking) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fr_sched_state);
} sched_state SEC(".maps");

/* One struct fr_switch_batch per CPU (event.h), indexed by CPU number:
 * an array, not a per-CPU array, so that the daemon can read how many
 * records each CPU holds through mmap.  Its size is set by the daemon.
 * Only its own CPU writes an element, with interrupts off (the switch
 * tracepoint) or preemption off (fr_switch_flush under
 * BPF_PROG_TEST_RUN): never two at once. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_switch_batch);
} switch_batch SEC(".maps");

/* Off-CPU waits whose user stack is being copied: each CPU hands out its
 * own FR_OFFCPU_SLOTS slots in turn, one per wait that ended on it (a
 * slot in use is skipped; none free: the record goes without its user
 * stack, flagged).  The array is sized by the daemon: CPUs x
 * FR_OFFCPU_SLOTS (event.h). */

struct offcpu_pending {
	struct bpf_task_work tw;
	__u64 ts, duration;
	__s32 syscall_nr;
	__u32 state;
	__u16 kernel_frames;
	__u8 busy;       /* from the switch to the end of the callback */
	__u8 waker;      /* FR_OFFCPU_WAKER, or 0 */
	__u64 kstack[FR_STACK_DEPTH];
	struct fr_py_scratch py; /* its Python walk's (python.bpf.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FR_OFFCPU_SLOTS);
	__type(key, __u32);
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

/* Processes with an off-CPU stack recorded before, and their image: a
 * process's first one wakes the daemon at once, so that it reads the
 * process's mappings while it exists (a program that waits once and
 * exits), as the sampler does with its first sample (profile.bpf.c).
 * 4 Ki entries, 256 KiB: one forgotten costs only an early wakeup. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_seen SEC(".maps");

/* the next slot each CPU tries */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_next SEC(".maps");

/* Linux 6.18; resolved to 0 where missing, and then not called
 * (have_task_work is set from the kernel's BTF before load) */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
					      int (*callback)(struct bpf_map *, void *, void *),
					      void *aux__prog) __weak __ksym;
const volatile bool have_task_work = false;

/* inputs */
bool offcpu_stacks = true;
bool wakers = true;         /* the waker of each wait over the threshold */
__u32 waker_budget = 64;    /* waker stacks per CPU per second; past it, none */
__u64 offcpu_threshold_ns = 1000000000;
__u64 runq_threshold_ns = 50000000;
bool offcpu_enabled = true;
bool runq_enabled = true;
bool full = false; /* every context switch, for short high-fidelity use */
/* changed by the daemon whenever it sets the inputs: run delays stamped
 * before (when run queue latency was off, and stamps stopped) are stale */
__u32 runq_epoch = 1;

/*
 * Time.  The scheduler read the clock for this switch already: its run
 * queue's clock (update_rq_clock() in __schedule(); sched_clock, the clock
 * sched_info counts in).  Reading one again costs more than anything else
 * the program does (bpf_ktime_get_boot_ns(): ~100 ns a call on these VMs,
 * where an empty program costs ~60 ns under bpf_stats), so the program
 * converts the run queue's clock to CLOCK_BOOTTIME, the clock of every
 * record, with an offset it measures again every FR_CLOCK_PERIOD_NS.
 *
 * How the offset is kept from late measurements: clock-filter.h; each
 * CPU keeps its own, measured against its own run queue's clock, so that
 * neither a CPU whose clock is behind another's (sched_clock is per CPU
 * where the TSC is not stable) nor two CPUs updating it at once put it
 * off.  Without CONFIG_FAIR_GROUP_SCHED (the way to the run queue from a
 * task), or without clock_update_flags (below), the program reads
 * CLOCK_BOOTTIME itself.
 *
 * Full mode needs more: the run queue's clock can be a tick old when the
 * scheduler skipped its update (after a wakeup that asked for the switch
 * had just updated it; without preemption the switch may come a tick
 * later), and a switch record placed that much early can sort before the
 * switch it follows.  So full mode reads CLOCK_BOOTTIME when the run queue
 * says it skipped the update (RQCF_ACT_SKIP in clock_update_flags).  Recent
 * kernels no longer say so by the time the switch is traced (they reset
 * the flags right after the update in __schedule(); none of 5.2 M
 * switches showed it on this 6.18), and the program converts the clock
 * for every switch: up to 32 us old for 99.9 % of them here
 * (clock-filter.h), 1-2 ms old for about one in a million.
 * Reading the clock at every switch instead cost ~60 ns of a ~250 ns
 * program.  Off-CPU and run-queue intervals, ms to seconds long, do not
 * mind either way; nor does the kernel, which counts run delays on that
 * clock.
 */
#define RQCF_ACT_SKIP 0x02 /* kernel/sched/sched.h */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_clock_filter);
} clock_filters SEC(".maps");

/* Can the run queue's clock be converted?  Not without the way to it
 * from a task, or without knowing whether it is stale. */
static __always_inline bool have_rq_clock(struct task_struct *t)
{
	return bpf_core_field_exists(t->se.cfs_rq) && bpf_core_field_exists(struct rq, clock_update_flags);
}

/* Now, on CLOCK_BOOTTIME, from the clock of this CPU's run queue (@t is a
 * task on it); *@clock is set to the run queue's clock.  @switch_time: a
 * switch record's time, which must not be a tick early: read when the
 * scheduler says it skipped the clock's update (above), which is then
 * not measured against.  While a step of the offset waits for its second
 * measurement (a resume from suspend, clock-filter.h) it is read too. */
static __always_inline __u64 now_boot(struct task_struct *t, __u64 *clock, bool switch_time)
{
	__u32 zero = 0;
	struct fr_clock_filter *f;
	struct rq *rq;
	bool skipped;
	__u64 c, b;

	f = bpf_map_lookup_elem(&clock_filters, &zero);
	if (!f || !have_rq_clock(t))
		return *clock = bpf_ktime_get_boot_ns();
	rq = t->se.cfs_rq->rq;
	*clock = c = rq->clock;
	skipped = rq->clock_update_flags & RQCF_ACT_SKIP;
	if (!skipped && fr_clock_filter_due(f, c)) {
		b = bpf_ktime_get_boot_ns();
		fr_clock_filter_measure(f, c, b);
		return f->step != 0 ? b : c + f->offset;
	}
	/* a switch's stale clock, no offset yet, or a step unconfirmed */
	if ((switch_time && skipped) || f->at == 0 || f->step != 0)
		return bpf_ktime_get_boot_ns();
	return c + f->offset;
}

static __always_inline struct fr_sched_state *state(struct task_struct *t, bool create)
{
	struct fr_sched_state *s = bpf_task_storage_get(&sched_state, t, 0,
							 create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	struct fr_counters *c;

	if (!s && create) {
		c = fr_counters(FR_SRC_SCHED);
		if (c)
			c->untracked++;
	}
	return s;
}

/* the daemon, or its stack parser (whose waits would need it to name them) */
static __always_inline bool is_self(struct task_struct *t)
{
	return t->tgid == self_tgid || (helper_tgid && t->tgid == helper_tgid);
}

/* The system call @t is blocked in, or -1.  @t is off its CPU, so the
 * registers it entered the kernel with (from user space, the last time)
 * are at the top of its kernel stack.
 *
 * x86-64: orig_ax is the call's number for a system call.  Exception and
 * interrupt entries store -1 there on this kernel (the error code or
 * vector the hardware or entry stub put in that slot is moved out), but
 * that has not always been so, and orig_ax alone is not enough anyway:
 * user threads the kernel makes (io_uring workers) start with a copy of
 * their creator's registers from inside its system call, ip cleared.  So
 * also require what the SYSCALL instruction leaves: the return address in
 * rcx and the flags in r11, which the entry code stores as they are (the
 * kernel's own test for returning with SYSRET, in do_syscall_64()).  An
 * exception, an interrupt or a made thread leaves those pairs unrelated.
 * 32-bit (compat) calls read as "none": int 0x80 and SYSENTER do not keep
 * the pairs, 32-bit SYSCALL stores ebp in cx, and their numbers are of
 * another table.  CPUs with FRED event delivery (not these machines) are
 * untested: where SYSCALL leaves rcx and r11 alone, calls read as "none".
 *
 * Other architectures: -1 (not implemented). */
static __always_inline __s32 blocked_syscall(struct task_struct *t)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs;
	long nr;

	if (t->flags & PF_KTHREAD)
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return -1;
	nr = (long)regs->orig_ax;
	if (nr < 0 || nr > 0x7fffffff || regs->cx != regs->ip || regs->r11 != regs->flags)
		return -1;
	return (__s32)nr;
#else
	return -1;
#endif
}

/* An interval of @duration ns that started at @start (CLOCK_BOOTTIME).
 * @syscall_nr: see struct fr_event_sched */
static __always_inline void emit(struct task_struct *t, __u16 type, __u64 start, __u64 duration, __s32 syscall_nr,
				 __u32 state, __u16 flags)
{
	struct fr_event_sched *e;
	struct fr_slot slot;

	e = fr_reserve(sizeof(*e), FR_SRC_SCHED, &slot);
	if (!e)
		return;
	fr_fill_hdr_task(&e->hdr, type, t, start);
	e->hdr.pad = state;
	e->hdr.flags = flags;
	if (t->flags & PF_KTHREAD)
		e->hdr.flags |= FR_OFFCPU_KTHREAD;
	e->duration_ns = duration;
	e->syscall_nr = syscall_nr;
	e->pad = 0;
	fr_submit(e, &slot);
}

/* What an offcpu record holds besides its stacks. */
static __always_inline void fill_offcpu(struct fr_event_offcpu *e, struct task_struct *t, __u64 start,
					__u64 duration, __s32 syscall_nr, __u32 state, __u16 user, __u16 waker)
{
	fr_fill_hdr_task(&e->hdr, FR_EV_OFFCPU, t, start);
	e->hdr.pad = state;
	e->hdr.flags = waker;
	if (t->flags & PF_KTHREAD)
		e->hdr.flags |= FR_OFFCPU_KTHREAD;
	e->duration_ns = duration;
	e->syscall_nr = syscall_nr;
	e->user = user;
	e->exe_ino = BPF_CORE_READ(t, mm, exe_file, f_inode, i_ino);
	e->ppid = BPF_CORE_READ(t, real_parent, tgid);
	e->ustack_len = 0;
	if (user == FR_OFFCPU_USER_KTHREAD)
		__builtin_memset(e->uregs, 0, sizeof(e->uregs));
	else
		copy_uregs(e->uregs, (const struct pt_regs *)bpf_task_pt_regs(t));
}

/* Task work, in the task that waited, as it returns to user space: the
 * record, with the user stack it entered the kernel with. */
static int offcpu_copy_user(struct bpf_map *map, void *key, void *value)
{
	struct offcpu_pending *p = value;
	struct task_struct *t = bpf_get_current_task_btf();
	struct fr_event_offcpu *e;
	struct fr_slot slot;
	__u64 *known, ino;
	__u32 len, tgid;

	/* first: the descriptions of its code objects go into the ring
	 * before the record that needs them */
	fr_py_walk(t, &p->py);
	e = fr_reserve(sizeof(*e) + FR_USTACK_COPY + sizeof(struct fr_py_stack), FR_SRC_SCHED, &slot);
	if (e) {
		fill_offcpu(e, t, p->ts, p->duration, p->syscall_nr, p->state, FR_OFFCPU_USER_COPIED, p->waker);
		e->kernel_frames = p->kernel_frames;
		__builtin_memcpy(e->kstack, p->kstack, sizeof(e->kstack));
		len = fr_ustack_len(t, e->uregs[7]);
		/* sleepable here: pages not present are faulted in.  When the
		 * mapping could not be looked up (another thread of the process
		 * held its lock: one that exits, unmapping its own stack, as it
		 * wakes this one), @len is the most, which may cross the
		 * stack's end: then the pages up to the first that does not read */
		if (len && bpf_copy_from_user(e->ustack, len, (const void *)e->uregs[7]) != 0)
			len = fr_copy_pages(e->ustack, e->uregs[7], len);
		if (len)
			e->ustack_len = len;
		else
			e->user = FR_OFFCPU_USER_UNREADABLE;
		bpf_probe_read_kernel(e->ustack + FR_USTACK_COPY, sizeof(struct fr_py_stack), &p->py.st);
		tgid = e->hdr.pid;
		ino = e->exe_ino;
		known = bpf_map_lookup_elem(&offcpu_seen, &tgid);
		if (!known || *known != ino) {
			bpf_map_update_elem(&offcpu_seen, &tgid, &ino, BPF_ANY);
			fr_submit_now(e);
		} else {
			fr_submit(e, &slot);
		}
	}
	p->busy = 0;
	return 0;
}

/* The record of @t's wait, written now, without its user stack (@user
 * says why). */
static __always_inline void offcpu_now(struct task_struct *t, __u64 start, __u64 duration, __s32 syscall_nr,
				       __u32 state, __u16 user, __u16 waker)
{
	struct fr_event_offcpu *e;
	struct fr_slot slot;
	long n;

	e = fr_reserve(sizeof(*e), FR_SRC_SCHED, &slot);
	if (!e)
		return;
	fill_offcpu(e, t, start, duration, syscall_nr, state, user, waker);
	n = bpf_get_task_stack(t, e->kstack, sizeof(e->kstack), 0);
	e->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	fr_submit(e, &slot);
}

/* @t waited @duration ns from @start, over the threshold, and is about to
 * run: its record, with stacks when they are on. */
static __always_inline void offcpu(struct task_struct *t, __u64 start, __u64 duration, __u32 state,
				   __u16 waker)
{
	__s32 nr = blocked_syscall(t);
	struct offcpu_pending *p = NULL;
	__u32 zero = 0, *next, i;
	long n;

	if (!offcpu_stacks) {
		emit(t, FR_EV_OFFCPU, start, duration, nr, state, waker);
		return;
	}
	if (t->flags & (PF_KTHREAD | PF_IO_WORKER)) {
		offcpu_now(t, start, duration, nr, state, FR_OFFCPU_USER_KTHREAD, waker);
		return;
	}
	if (!have_task_work) {
		offcpu_now(t, start, duration, nr, state, FR_OFFCPU_USER_NO_TASK_WORK, waker);
		return;
	}
	next = bpf_map_lookup_elem(&offcpu_next, &zero);
	if (next) {
		i = bpf_get_smp_processor_id() * FR_OFFCPU_SLOTS + (*next % FR_OFFCPU_SLOTS);
		*next += 1;
		p = bpf_map_lookup_elem(&offcpu_pending, &i);
	}
	if (!p || p->busy) {
		offcpu_now(t, start, duration, nr, state, FR_OFFCPU_USER_BUSY, waker);
		return;
	}
	p->busy = 1;
	p->ts = start;
	p->duration = duration;
	p->syscall_nr = nr;
	p->state = state;
	p->waker = waker;
	n = bpf_get_task_stack(t, p->kstack, sizeof(p->kstack), 0);
	p->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	if (bpf_task_work_schedule_resume_impl(t, &p->tw, &offcpu_pending, offcpu_copy_user, NULL) != 0) {
		p->busy = 0;
		offcpu_now(t, start, duration, nr, state, FR_OFFCPU_USER_BUSY, waker);
	}
}

/* How long @t, about to get this CPU, waited for one since it last had
 * one: the run delay the kernel is about to add (its run_delay total, plus
 * the wait on this run queue it has not added yet, up to @clock, the run
 * queue's clock) less the total when @t last got a CPU.  Waits on other
 * run queues before a migration count, as they do in the kernel's total.
 * Sets *@total to the new total. */
static __always_inline __u64 runq_wait(struct task_struct *t, const struct fr_sched_state *s, __u64 clock,
				       __u64 *total)
{
	__u64 queued, here = 0, sum;

	/* no CONFIG_SCHED_INFO, or no CONFIG_FAIR_GROUP_SCHED (@clock is not
	 * the run queue's: the runqueues per-CPU symbol needs KALLSYMS_ALL) */
	if (!bpf_core_field_exists(t->sched_info.last_queued) || !have_rq_clock(t))
		return 0;
	queued = t->sched_info.last_queued;
	if (queued && clock > queued)
		here = clock - queued;
	sum = t->sched_info.run_delay + here;
	*total = sum;
	if (s->arrived == runq_epoch)
		return sum > s->run_delay ? sum - s->run_delay : 0;
	/* first seen: all of its total when it never ran, else the wait on
	 * this run queue (earlier waits cannot be told apart) */
	return t->sched_info.pcount == 0 ? sum : here;
}

/* Writes the switch records @b holds to this CPU's ring as one record,
 * counting them as emitted, or dropped if the ring has no room. */
static __always_inline void flush_switches(struct fr_switch_batch *b)
{
	__u32 cpu = bpf_get_smp_processor_id(), n = b->n;
	__u64 size = (__u64)n * sizeof(struct fr_event_switch), flags = BPF_RB_NO_WAKEUP;
	struct fr_counters *c = fr_counters(FR_SRC_SCHED);
	void *rb;

	if (n == 0)
		return;
	b->n = 0;
	if (c)
		c->emitted += n;
	rb = bpf_map_lookup_elem(&rings, &cpu);
	if (rb && bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	/* (more than a batch holds: never written so; counted, not stuck).
	 * Switch records are bulk, as samples are (emit.bpf.h): they
	 * leave the ring's headroom to the rare records */
	if (!rb || size > sizeof(b->rec) || fr_ring_bulk_full(rb, size) ||
	    bpf_ringbuf_output(rb, b->rec, size, flags) < 0) {
		if (c)
			c->dropped += n;
	}
}

static __always_inline struct fr_switch_batch *this_cpu_batch(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&switch_batch, &cpu);
}

/* Run by the daemon on a CPU whose batch holds records (see event.h). */
SEC("raw_tp")
int fr_switch_flush(void *ctx)
{
	struct fr_switch_batch *b = this_cpu_batch();

	if (b)
		flush_switches(b);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fr_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 clock, now = now_boot(next, &clock, full);
	struct fr_sched_state *s;

	if (full) {
		struct fr_switch_batch *b = this_cpu_batch();

		if (b) {
			struct fr_event_switch *e = &b->rec[b->n & (FR_SWITCH_BATCH - 1)];

			fr_fill_hdr_task(&e->hdr, FR_EV_SWITCH, prev, now);
			e->prev_state = prev_state;
			e->next_pid = next->tgid;
			e->next_tid = next->pid;
			e->pad = 0;
			__builtin_memcpy(e->next_comm, next->comm, sizeof(e->next_comm));
			/* to idle: nothing is held while the CPU sleeps */
			if (++b->n >= FR_SWITCH_BATCH || next->pid == 0)
				flush_switches(b);
		}
	}

	/* prev leaves the CPU blocked (a preempted one is still runnable:
	 * the kernel counts its wait) */
	if (offcpu_enabled && prev_state != 0 /* TASK_RUNNING */ && prev->pid != 0 && !is_self(prev)) {
		s = state(prev, true);
		if (s) {
			s->offcpu_ts = now;
			s->state = prev_state;
		}
	}

	/* next gets the CPU: close its intervals */
	if (next->pid == 0 || is_self(next))
		return 0;
	s = state(next, runq_enabled);
	if (!s)
		return 0;
	if (runq_enabled) {
		__u64 total = 0, wait = runq_wait(next, s, clock, &total);

		if (wait >= runq_threshold_ns && wait <= now)
			emit(next, FR_EV_RUNQ, now - wait, wait, -1, 0, 0);
		s->run_delay = total;
		s->arrived = runq_epoch;
	}
	if (s->offcpu_ts) {
		/* stamped on another CPU maybe, and the offset moves: an
		 * interval shorter than that can come out negative */
		__u64 off = now > s->offcpu_ts ? now - s->offcpu_ts : 0;

		/* (a wait whose waker was written is over the threshold on
		 * the exact clock, even when this one is a tick behind) */
		if (off >= offcpu_threshold_ns || s->waker_for == s->offcpu_ts)
			offcpu(next, s->offcpu_ts, off, s->state, s->waker_for == s->offcpu_ts ? FR_OFFCPU_WAKER : 0);
		s->offcpu_ts = 0;
	}
	return 0;
}

/*
 * Wakers.  Who ended a wait over the threshold: at the wakeup
 * (sched_waking, run by the waker on its own CPU, before the woken task
 * can run and make its offcpu record), a struct fr_event_waker with the
 * waker's stacks; the wakee's state says it was written, and its offcpu
 * record carries FR_OFFCPU_WAKER so that the daemon waits for it (the
 * two are in different CPUs' rings).  Every other wakeup pays one
 * comparison of clocks at hand (maybe_long()), ~50-100 ns over the
 * program's own ~80 (bpf_stats under perf bench sched messaging: the
 * task storage lookup it replaced cost ~200, a cache miss on the state
 * the wakee's CPU wrote); waits that pass it have their state looked up
 * and are timed exactly.  In an interrupt the task on the CPU
 * is not the waker: the context says so (waker_context()), and only the
 * kernel stack is taken.  Stacks past waker_budget a second per CPU are
 * not taken (a broadcast waking thousands): the waker is still said.
 */
/* two ticks at HZ=100: the run queue's clock is a tick old at most */
#define CLOCK_SLACK_NS 20000000ULL
/* x86-64's THREAD_SIZE (without KASAN): a task's kernel stack */
#define TASK_STACK_SIZE 16384

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_stack_budget);
} waker_budgets SEC(".maps");

/* Waker events the ring had no room for, per CPU.  A waker is no record
 * of its own (the daemon puts it into its wait's): it is not counted as
 * the sched source's, whose emitted = stored + dropped holds exactly, and
 * its loss is no gap (the wait's record is there, without it). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} waker_drops SEC(".maps");

/* In what context is this wakeup?  The kernel's preempt count would say
 * (in_hardirq(), in_serving_softirq()), but it is per-CPU data, which
 * BPF reaches only through kallsyms (CONFIG_KALLSYMS_ALL, off here).
 * Which stack the kernel runs on says it instead: an interrupt runs on
 * its CPU's interrupt stack (hard interrupts, and the softirqs run on
 * their exit), an NMI or exception on its own, a task on its task stack.
 * Softirqs run by a task (as it enables them again: a send over
 * loopback) or by ksoftirqd are on that task's stack, and are its: that
 * task made them run.  Readers tell a softirq from a hard interrupt by
 * the frames.  @ctx, the tracepoint's arguments, is on the kernel's stack
 * (bpf_trace_run1()'s array); the program's own frame need not be (Linux
 * 6.13 gives programs stacks of their own). */
static __always_inline __u16 waker_context(struct task_struct *cur, void *ctx)
{
	__u64 at, base = (__u64)cur->stack;

	/* (a pointer as a number: root's programs may) */
	asm volatile("%0 = %1" : "=r"(at) : "r"(ctx));
	if (at < base || at >= base + TASK_STACK_SIZE)
		return FR_WAKER_HARDIRQ;
	return cur->flags & PF_KTHREAD ? FR_WAKER_KTHREAD : FR_WAKER_TASK;
}

/* May @p, being woken by @cur, have waited over the threshold?  A test
 * on what is at hand before @p's state is looked up, which costs a cache
 * miss or two (the state was written on the CPU @p blocked on): @p got a
 * CPU last at sched_info.last_arrival (the run queue's clock) and blocked
 * after, so a wakeup within the threshold of it ends a shorter wait.
 * Now is this CPU's run queue clock, a tick old at most where a task
 * runs; on an idle CPU, whose run queue clock stops, CLOCK_BOOTTIME less
 * the offset the switches measure (now_boot()). */
static __always_inline bool maybe_long(struct task_struct *p, struct task_struct *cur)
{
	struct fr_clock_filter *f;
	__u32 zero = 0;
	__u64 now;

	if (!bpf_core_field_exists(p->sched_info.last_arrival) || !have_rq_clock(cur))
		return true;
	if (cur->pid) {
		now = cur->se.cfs_rq->rq->clock;
	} else {
		f = bpf_map_lookup_elem(&clock_filters, &zero);
		if (!f || f->at == 0 || f->step != 0)
			return true;
		now = bpf_ktime_get_boot_ns() - f->offset;
	}
	return now + CLOCK_SLACK_NS >= p->sched_info.last_arrival + offcpu_threshold_ns;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fr_waking, struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fr_sched_state *s;
	struct fr_event_waker *e;
	struct fr_py_scratch *py;
	bool stacks, user;
	__u16 context;
	__u32 zero = 0;
	__u64 now;
	long n;

	if (!wakers || !offcpu_enabled || !maybe_long(p, cur))
		return 0;
	s = state(p, false);
	if (!s || !s->offcpu_ts)
		return 0;
	now = bpf_ktime_get_boot_ns();
	if (now < s->offcpu_ts + offcpu_threshold_ns || s->waker_for == s->offcpu_ts || is_self(p))
		return 0;
	s->waker_for = s->offcpu_ts;
	context = waker_context(cur, ctx);
	/* on the task's stack, but not in a system call: an interrupt that
	 * came in user mode (run on the task stack), or a fault; the frames
	 * tell which */
	if (context == FR_WAKER_TASK && blocked_syscall(cur) < 0)
		context = FR_WAKER_UNKNOWN;
	/* a user stack only of a user task waking in its own system call */
	stacks = fr_stack_allowed(&waker_budgets, now, waker_budget);
	user = stacks && context == FR_WAKER_TASK && cur->mm;
	/* first: the descriptions of its Python code objects go into the
	 * ring before the event that needs them */
	py = user ? bpf_map_lookup_elem(&py_scratch, &zero) : NULL;
	if (py)
		fr_py_walk(cur, py);
	e = fr_reserve_aux(sizeof(*e) + (py ? FR_USTACK_COPY + sizeof(struct fr_py_stack) : 0), &waker_drops);
	if (!e)
		return 0;
	fr_fill_hdr_task(&e->hdr, FR_EV_WAKER, cur, now);
	e->wakee_pid = p->tgid;
	e->wakee_tid = p->pid;
	e->wait_start = s->offcpu_ts;
	e->context = context;
	e->ustack_len = 0;
	e->exe_ino = 0;
	e->ppid = BPF_CORE_READ(cur, real_parent, tgid);
	e->pad = 0;
	e->kernel_frames = 0;
	__builtin_memset(e->uregs, 0, sizeof(e->uregs));
	if (!stacks) {
		e->hdr.flags = FR_WAKER_NO_STACK;
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		return 0;
	}
	/* from try_to_wake_up (not the tracepoint's caller in BPF) */
	n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 2 & BPF_F_SKIP_FIELD_MASK);
	e->kernel_frames = n > 0 ? (__u64)n / 8 : 0;
	if (py) {
		e->exe_ino = BPF_CORE_READ(cur, mm, exe_file, f_inode, i_ino);
		copy_uregs(e->uregs, (const struct pt_regs *)bpf_task_pt_regs(cur));
		e->ustack_len = fr_read_ustack(cur, e->ustack, e->uregs[7]);
		bpf_probe_read_kernel(e->ustack + FR_USTACK_COPY, sizeof(struct fr_py_stack), &py->st);
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
