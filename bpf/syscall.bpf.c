// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Slow system calls.  sys_enter stamps the start, sys_exit emits a record
 * only when the call took longer than threshold_ns, so user space sees only
 * what is worth keeping.  Calls that block by design (epoll_wait, futex, …)
 * are excluded through a bitmap.
 *
 * Every call on the machine runs both programs, so what they cost is paid
 * per call (tests/bench/syscall-split.sh, 2 vCPUs under the SRSO "safe
 * RET" mitigation, where each helper call that returns costs ~20 ns): two
 * empty programs add ~118 ns to getppid(), a task-storage get ~40 ns, a
 * CLOCK_BOOTTIME read ~60 ns.  Hence:
 *
 * - The start waits in a per-CPU slot, keyed by the calling thread's
 *   pt_regs (the raw tracepoints' first argument: the top of its kernel
 *   stack, one per thread), not in task storage: a call that leaves the CPU
 *   before sys_exit does so through sched_switch, whose program moves the
 *   stamp to the thread's task storage; sys_exit looks there only when the
 *   slot is not its own.  So a call that stays on its CPU costs no helper
 *   call at all, only inlined map loads.
 * - The stamp is jiffies (bpf_jiffies64(): one inlined load) and, while the
 *   threshold is under FR_SYS_COARSE_TICKS ticks, CLOCK_BOOTTIME too.
 *   sys_exit reads CLOCK_BOOTTIME only when the call may be over the
 *   threshold by the jiffies (more than threshold - 3 ticks).  With a
 *   jiffies-only stamp the duration is the jiffies elapsed times the tick:
 *   within a tick (plus how late the tick updated jiffies) of the real one,
 *   at most 1/FR_SYS_COARSE_TICKS of the threshold; the record's start is
 *   its end (read then) less that duration.  The tick's length is not
 *   known to BPF: it is measured (jiffies against CLOCK_MONOTONIC over
 *   FR_SYS_CALIBRATE_NS after load, HZ rounded); until then every stamp
 *   reads the clock.
 * - The self check (flightrecd's own calls are never recorded) is made
 *   only for a call that is over the threshold: the slot costs nothing to
 *   fill for our own threads, and only a record would feed back.
 */
#include "emit.bpf.h"

/* A call in flight: in the per-CPU slot, or in its thread's task storage
 * once it left the CPU. */
struct fr_sys_start {
	__u64 key;   /* slot: the thread's pt_regs; storage: nonzero; 0: none */
	__u64 ts;    /* CLOCK_BOOTTIME at sys_enter, when FR_SYS_PRECISE */
	__u64 jiffies;
	__u32 nr;
	__u32 flags;
};
#define FR_SYS_PRECISE  1 /* ts is set */
#define FR_SYS_EXCLUDED 2 /* not timed: the slot only says sys_exit has nothing to do */

/* jiffies-only stamps from a threshold of this many ticks (80 ms at HZ
 * 250, 200 ms at HZ 100): a tick's error is then at most 5 % of it */
#define FR_SYS_COARSE_TICKS 20
#define FR_SYS_CALIBRATE_NS 10000000000ULL /* 10 s: HZ within 0.1 at HZ 1000 */
#define FR_NSEC_PER_SEC 1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fr_sys_start);
} sys_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_sys_start);
} sys_slot SEC(".maps");

/* inputs */
__u64 threshold_ns = 100000000;
__u64 exclude[FR_SYSCALL_MAX / 64];

/* inner state: the tick, and what follows from it for threshold_ns */
__u64 tick_ns;     /* a jiffy in ns; 0 until measured */
__u64 cal_jiffies; /* the measurement's first sample */
__u64 cal_mono;
__u64 skip_for;    /* the threshold skip_ticks and coarse_for are for */
__u64 skip_ticks;  /* a call fewer jiffies long is under it: no clock read */
__u64 coarse_for;  /* == threshold_ns: stamp jiffies only (0: never) */

static __always_inline struct fr_sys_start *cpu_slot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sys_slot, &zero);
}

/* Called with every stamp that read the clock, until the tick is known and
 * the values for the current threshold are set. */
static __always_inline void calibrate(__u64 jiffies)
{
	__u64 thr = threshold_ns, mono, hz, ticks;

	if (tick_ns == 0) {
		/* CLOCK_MONOTONIC: like jiffies, it stops while suspended */
		mono = bpf_ktime_get_ns();
		if (cal_mono == 0 || mono < cal_mono || jiffies < cal_jiffies) {
			cal_jiffies = jiffies;
			cal_mono = mono;
			return;
		}
		if (mono - cal_mono < FR_SYS_CALIBRATE_NS)
			return;
		hz = ((jiffies - cal_jiffies) * FR_NSEC_PER_SEC + (mono - cal_mono) / 2) / (mono - cal_mono);
		if (hz < 10 || hz > 10000) { /* cannot be: measure again */
			cal_jiffies = jiffies;
			cal_mono = mono;
			return;
		}
		tick_ns = (FR_NSEC_PER_SEC + hz / 2) / hz; /* TICK_NSEC */
	}
	/* d < (jiffies elapsed + 1) ticks + the lag of the jiffies update:
	 * a call fewer than threshold/tick - 2 jiffies long is under it
	 * while that lag is under a tick */
	ticks = thr / tick_ns;
	skip_ticks = ticks > 2 ? ticks - 2 : 0;
	coarse_for = ticks >= FR_SYS_COARSE_TICKS ? thr : 0;
	asm volatile("" ::: "memory"); /* skip_for last: it makes the rest valid */
	skip_for = thr;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(fr_sys_enter, struct pt_regs *regs, long id)
{
	struct fr_sys_start *s = cpu_slot();
	__u32 nr = id;

	if (!s)
		return 0;
	s->key = (__u64)regs;
	if (id < 0 || id >= FR_SYSCALL_MAX ||
	    (exclude[(nr / 64) & (FR_SYSCALL_MAX / 64 - 1)] & (1ULL << (nr % 64)))) {
		s->flags = FR_SYS_EXCLUDED;
		return 0;
	}
	s->nr = nr;
	s->jiffies = bpf_jiffies64();
	if (coarse_for == threshold_ns) {
		s->flags = 0;
		return 0;
	}
	s->ts = bpf_ktime_get_boot_ns();
	s->flags = FR_SYS_PRECISE;
	if (tick_ns == 0 || skip_for != threshold_ns)
		calibrate(s->jiffies);
	return 0;
}

/* A thread leaves the CPU inside a call: its stamp goes with it, to its
 * task storage (current is still @prev here, the only thread the slot can
 * hold: a thread leaves a CPU only through here). */
SEC("tp_btf/sched_switch")
int BPF_PROG(fr_sys_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct fr_sys_start *sl = cpu_slot(), *s;
	struct fr_counters *c;

	if (!sl || !sl->key)
		return 0;
	if ((sl->flags & FR_SYS_EXCLUDED) || prev->tgid == self_tgid ||
	    sl->key != (__u64)bpf_task_pt_regs(prev)) {
		sl->key = 0;
		return 0;
	}
	s = bpf_task_storage_get(&sys_start, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		c = fr_counters(FR_SRC_SYSCALL);
		if (c)
			c->untracked++;
	} else {
		s->ts = sl->ts;
		s->jiffies = sl->jiffies;
		s->nr = sl->nr;
		s->flags = sl->flags;
		s->key = 1;
	}
	sl->key = 0;
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(fr_sys_exit, struct pt_regs *regs, long ret)
{
	struct fr_event_syscall *e;
	struct fr_sys_start *s = cpu_slot();
	__u64 now, dur, ticks, thr;
	struct fr_slot slot;

	if (!s)
		return 0;
	if (s->key != (__u64)regs) {
		s = bpf_task_storage_get(&sys_start, bpf_get_current_task_btf(), 0, 0);
		if (!s || !s->key)
			return 0;
	}
	s->key = 0;
	if (s->flags & FR_SYS_EXCLUDED)
		return 0;
	ticks = bpf_jiffies64() - s->jiffies;
	thr = threshold_ns;
	if (skip_for == thr && ticks < skip_ticks)
		return 0;
	/* may be over the threshold: rare */
	now = bpf_ktime_get_boot_ns();
	if (s->flags & FR_SYS_PRECISE)
		dur = now - s->ts;
	else
		dur = ticks * tick_ns;
	if (dur < thr || fr_is_self())
		return 0;
	e = fr_reserve(sizeof(*e), FR_SRC_SYSCALL, &slot);
	if (!e)
		return 0;
	fr_fill_hdr(&e->hdr, FR_EV_SYSCALL);
	/* The record's time is the start of the call: that is when the
	 * thread began waiting, and what a timeline should show. */
	e->hdr.ts = now - dur;
	e->duration_ns = dur;
	e->ret = ret;
	e->nr = s->nr;
	e->pad = 0;
	fr_submit(e, &slot);
	return 0;
}
