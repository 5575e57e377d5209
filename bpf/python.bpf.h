/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames (event.h: struct fr_py_stack), taken where a user stack
 * is copied: by the CPU sampler and by the off-CPU stacks' task work,
 * in the thread itself.
 *
 * CPython keeps each thread's frames as a chain in its memory: from
 * _PyRuntime, a static of the executable, to the interpreters, their
 * thread states, and from the running thread's state (the one whose
 * thread_id, its pthread_self(), is the task's FS base) through its
 * current C frame to the innermost interpreter frame; each frame points
 * to its code object and to the frame that called it.  The daemon finds
 * _PyRuntime and the version in the executable, and puts them, with the
 * version's offsets (lib/python-offsets.c), into py_exes, keyed by the
 * executable as BPF sees it: only executables there are walked, and every
 * read is checked.  Names are not read per frame: each code object a
 * walk meets is described once per process and CPU (struct
 * fr_event_pycode, written before the record whose frames need it, in the
 * same ring: the daemon has it when it reads the record), and the
 * description is checked against the code object at each walk (a code
 * object freed and another made at its address is described again).
 * Descriptions are limited per CPU and second: past the budget a frame
 * goes undescribed (counted), and is described at a later walk.
 */
#ifndef FR_PYTHON_BPF_H
#define FR_PYTHON_BPF_H

#include "emit.bpf.h"
#include "stack-budget.bpf.h"

/* The executables known to be CPython (set by the daemon; shared by
 * every object that walks, daemon/python.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct fr_py_exe_key);
	__type(value, struct fr_py_exe);
} py_exes SEC(".maps");

/* The code objects described (event.h: struct fr_py_seen_key); the
 * value is the code object's identity when described (py_token()). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FR_PY_SEEN_MAX);
	__type(key, struct fr_py_seen_key);
	__type(value, __u64);
} py_seen SEC(".maps");

/* The thread state each thread had last: checked before use.  (These
 * three maps are the daemon's, shared by every object: daemon/rings.c.) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FR_PY_THREADS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} py_threads SEC(".maps");

/* Descriptions the ring had no room for (a PERCPU_ARRAY of one). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} py_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_stack_budget);
} py_budget SEC(".maps");

/* inputs */
__u32 py_describe_budget = 512; /* descriptions per CPU per second */

/* What a walk reads into: one per walk in progress (the caller's: the
 * sampler's per CPU, a task work's per pending wait). */
#define FR_PY_FRAME_READ 80
#define FR_PY_CODE_READ 192
#define FR_PY_OBJ_READ 40 /* a string's header to its state */
struct fr_py_scratch {
	struct fr_py_stack st;
	__u8 frame[FR_PY_FRAME_READ];
	__u8 code[FR_PY_CODE_READ];
	__u8 obj[FR_PY_OBJ_READ];
};

/* Each object's scratch for the walks of programs that cannot interrupt
 * each other on a CPU (the sampler's perf event, which can interrupt the
 * others, is in an object of its own; the off-CPU task work, which can
 * sleep, walks into its pending wait's slot instead). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fr_py_scratch);
} py_scratch SEC(".maps");

/* The 8 bytes at offset @off of @buf (@size bytes); 0 when they are not
 * in it. */
static __always_inline __u64 py_field(const __u8 *buf, __u32 size, __u32 off)
{
	if (off > size - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}
#define PY_FIELD(buf, size, off) py_field(buf, size, off)

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* The thread-list walk of py_thread_state(): one step each call. */
struct py_threads_ctx {
	const struct fr_py_offsets *o;
	__u64 interp, t, fsbase;
};

static long py_thread_step(__u32 i, struct py_threads_ctx *c)
{
	if (!c->interp)
		return 1;
	if (!c->t) {
		c->interp = py_read_ptr(c->interp + c->o->interp_next);
		c->t = c->interp ? py_read_ptr(c->interp + c->o->interp_threads_head) : 0;
		return 0;
	}
	if (py_read_ptr(c->t + c->o->tstate_thread_id) == c->fsbase)
		return 1; /* found: c->t */
	c->t = py_read_ptr(c->t + c->o->tstate_next);
	return 0;
}

/* The thread state of the current thread (@fsbase: its pthread_self()),
 * from the cache or by walking the interpreters' thread lists (at most
 * 256 steps); 0: none. */
static __always_inline __u64 py_thread_state(const struct fr_py_exe *x, __u64 runtime, __u32 tid, __u64 fsbase)
{
	__u64 *cached = bpf_map_lookup_elem(&py_threads, &tid);
	struct py_threads_ctx c = { .o = &x->off, .fsbase = fsbase };

	if (cached && *cached && py_read_ptr(*cached + x->off.tstate_thread_id) == fsbase)
		return *cached;
	c.interp = py_read_ptr(runtime + x->off.runtime_interp_head);
	c.t = c.interp ? py_read_ptr(c.interp + x->off.interp_threads_head) : 0;
	bpf_loop(256, py_thread_step, &c, 0);
	if (!c.interp || !c.t)
		return 0;
	bpf_map_update_elem(&py_threads, &tid, &c.t, BPF_ANY);
	return c.t;
}

/* A string object's characters, as CPython holds them (compact strings
 * only), into @dst (@max bytes, a power of two): the first @max bytes,
 * or with @tail the last.  Returns the bytes copied; *@kind 0 when not
 * read. */
static __always_inline __u32 py_read_unicode(struct fr_py_scratch *s, const struct fr_py_offsets *o, __u64 obj,
					     __u8 *dst, __u32 max, bool tail, __u8 *kind, __u8 *cut)
{
	__u64 len, data, n;
	__u32 state, k;

	*kind = 0;
	*cut = 0;
	if (!obj || bpf_probe_read_user(s->obj, sizeof(s->obj), (const void *)obj))
		return 0;
	len = PY_FIELD(s->obj, FR_PY_OBJ_READ, o->unicode_length);
	state = (__u32)PY_FIELD(s->obj, FR_PY_OBJ_READ, o->unicode_state);
	k = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (k != 1 && k != 2 && k != 4) || len > (1u << 24))
		return 0; /* not compact: an old-style string, not read */
	data = obj + ((state & (1u << 6)) ? o->unicode_ascii_data : o->unicode_compact_data);
	n = len * k;
	if (n > max) {
		if (tail)
			data += n - max;
		n = max;
		*cut = 1;
	}
	barrier_var(n);
	if (n > max)
		return 0;
	if (n && bpf_probe_read_user(dst, n, (const void *)data))
		return 0;
	*kind = (__u8)k;
	return (__u32)n;
}

/* The identity a description is checked by: where the code object's
 * names are, and its first line. */
static __always_inline __u64 py_token(struct fr_py_scratch *s, const struct fr_py_offsets *o)
{
	__u64 q = PY_FIELD(s->code, FR_PY_CODE_READ, o->code_qualname);
	__u64 f = PY_FIELD(s->code, FR_PY_CODE_READ, o->code_filename);
	__u64 l = PY_FIELD(s->code, FR_PY_CODE_READ, o->code_firstlineno);

	return q ^ (f << 1) ^ (__u32)l ^ 1;
}

/* The description of the code object in s->code at @code. */
static __always_inline bool py_describe(struct fr_py_scratch *s, const struct fr_py_offsets *o, __u64 code)
{
	struct fr_event_pycode *e;
	__u64 lines, size;
	__u32 n;

	e = fr_reserve_aux(sizeof(*e), &py_drops);
	if (!e)
		return false;
	fr_fill_hdr(&e->hdr, FR_EV_PYCODE);
	e->code = code;
	e->firstlineno = (__s32)PY_FIELD(s->code, FR_PY_CODE_READ, o->code_firstlineno);
	e->pad = 0;
	e->name_len = (__u16)py_read_unicode(s, o, PY_FIELD(s->code, FR_PY_CODE_READ, o->code_qualname), e->name,
					     FR_PY_NAME_MAX, false, &e->name_kind, &e->name_cut);
	e->file_len = (__u16)py_read_unicode(s, o, PY_FIELD(s->code, FR_PY_CODE_READ, o->code_filename), e->file,
					     FR_PY_FILE_MAX, true, &e->file_kind, &e->file_cut);
	e->lines_len = 0;
	e->lines_cut = 0;
	lines = PY_FIELD(s->code, FR_PY_CODE_READ, o->code_linetable);
	size = py_read_ptr(lines ? lines + o->bytes_size : 0);
	n = size > FR_PY_LINES_MAX ? FR_PY_LINES_MAX : (__u32)size;
	barrier_var(n);
	if (n <= FR_PY_LINES_MAX && n && bpf_probe_read_user(e->lines, n, (const void *)(lines + o->bytes_data)) == 0) {
		e->lines_len = (__u16)n;
		e->lines_cut = size > FR_PY_LINES_MAX;
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return true;
}

/* The frame walk and the descriptions of fr_py_walk(): one frame each
 * call. */
struct py_walk_ctx {
	struct fr_py_scratch *s;
	const struct fr_py_offsets *o;
	__u64 frame, now;
	struct fr_py_seen_key sk;
	__u32 n;
	__u8 status;
};

static long py_frame_step(__u32 i, struct py_walk_ctx *c)
{
	struct fr_py_scratch *s = c->s;
	const struct fr_py_offsets *o = c->o;
	struct fr_py_frame *f;
	__u64 code, prev;

	if (!c->frame) {
		c->status = FR_PY_WALKED;
		return 1;
	}
	if (i >= FR_PY_DEPTH)
		return 1;
	if (bpf_probe_read_user(s->frame, sizeof(s->frame), (const void *)c->frame)) {
		c->status = FR_PY_UNREADABLE;
		return 1;
	}
	code = PY_FIELD(s->frame, FR_PY_FRAME_READ, o->frame_code);
	if (!code) {
		c->status = FR_PY_UNREADABLE;
		return 1;
	}
	prev = PY_FIELD(s->frame, FR_PY_FRAME_READ, o->frame_prev_instr);
	barrier_var(i);
	f = &s->st.f[i & (FR_PY_DEPTH - 1)];
	f->code = code;
	f->lasti = (__s32)((__s64)(prev - (code + o->code_code)) >> 1);
	f->flags = (__u8)PY_FIELD(s->frame, FR_PY_FRAME_READ, o->frame_is_entry) ? FR_PY_ENTRY : 0;
	c->n = i + 1;
	c->frame = PY_FIELD(s->frame, FR_PY_FRAME_READ, o->frame_previous);
	return 0;
}

static long py_describe_step(__u32 i, struct py_walk_ctx *c)
{
	struct fr_py_scratch *s = c->s;
	__u64 code, token, *seen;

	if (i >= c->n || i >= FR_PY_DEPTH)
		return 1;
	barrier_var(i); /* the mask stays: the index the verifier sees */
	code = s->st.f[i & (FR_PY_DEPTH - 1)].code;
	if (bpf_probe_read_user(s->code, sizeof(s->code), (const void *)code))
		return 0;
	token = py_token(s, c->o);
	c->sk.code = code;
	seen = bpf_map_lookup_elem(&py_seen, &c->sk);
	if (seen && *seen == token)
		return 0;
	if (!fr_stack_allowed(&py_budget, c->now, py_describe_budget)) {
		if (s->st.names_over < 255)
			s->st.names_over++;
		return 0;
	}
	if (py_describe(s, c->o, code))
		bpf_map_update_elem(&py_seen, &c->sk, &token, BPF_ANY);
	return 0;
}

/* The current thread's Python frames into s->st, and descriptions of
 * their code objects not described yet: the task @task must be the
 * current one (its memory is read).  Loops are bpf_loop()s: the
 * verifier sees each body once. */
static __always_inline void fr_py_walk(struct task_struct *task, struct fr_py_scratch *s)
{
	struct fr_py_stack *st = &s->st;
	struct fr_py_exe_key key = {};
	struct py_walk_ctx c = {};
	const struct fr_py_exe *x;
	__u64 runtime, tstate;

	st->n = 0;
	st->status = FR_PY_NOT_PYTHON;
	st->names_over = 0;
	st->pad = 0;
	key.dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
	x = bpf_map_lookup_elem(&py_exes, &key);
	if (!x)
		return;
	runtime = BPF_CORE_READ(task, mm, start_code) + x->runtime_rel;
	tstate = py_thread_state(x, runtime, task->pid, BPF_CORE_READ(task, thread.fsbase));
	if (!tstate) {
		st->status = FR_PY_NO_THREAD;
		return;
	}
	c.s = s;
	c.o = &x->off;
	c.frame = py_read_ptr(py_read_ptr(tstate + x->off.tstate_cframe) + x->off.cframe_current_frame);
	if (!c.frame) {
		st->status = FR_PY_NO_FRAME;
		return;
	}
	c.status = FR_PY_CUT;
	bpf_loop(FR_PY_DEPTH, py_frame_step, &c, 0);
	/* a chain of exactly FR_PY_DEPTH frames is whole */
	if (c.status == FR_PY_CUT && !c.frame)
		c.status = FR_PY_WALKED;
	st->status = c.status;
	st->n = (__u16)c.n;

	/* the code objects not yet described to the daemon from this CPU */
	c.sk.tgid = task->tgid;
	c.sk.cpu = bpf_get_smp_processor_id();
	c.sk.start = BPF_CORE_READ(task, group_leader, start_time);
	c.sk.exec_id = (__u32)BPF_CORE_READ(task, self_exec_id);
	c.now = bpf_ktime_get_ns();
	bpf_loop(FR_PY_DEPTH, py_describe_step, &c, 0);
}

#endif
