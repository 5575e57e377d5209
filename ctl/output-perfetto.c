/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --format perfetto: Chrome's Trace Event Format (JSON), which the Perfetto
 * UI (ui.perfetto.dev), chrome://tracing and speedscope open as they are.
 *   - one track per thread, named, grouped under its process: syscalls
 *     as slices (X) with their exact durations; exec, exit, fork, signals,
 *     OOM kills and TCP events as instants;
 *   - beside it, a "<comm> sched" track for the thread's off-CPU and
 *     run-queue intervals (they need not nest in the syscall slices: a
 *     wait is stamped by the scheduler, a call by the syscall probes);
 *   - one track per CPU (under a "CPUs" process): what ran, from sched
 *     switch records, as slices; CPU samples (with their stacks in args)
 *     and gaps as instants;
 *   - block I/O as slices on tracks of their own per disk ("Block I/O"),
 *     since requests overlap their issuer's work, and each other: those
 *     in flight together go on lanes, one track each;
 *   - metrics as counters (CPU busy, available memory, load, pressure);
 *   - marks and triggers as global instants.
 * Times are microseconds (ns kept as 3 decimals) from the first record;
 * the absolute start is in the trace's metadata.  Events are written one
 * by one with json-c, so the output is never held in memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/crash-line.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/out-buf.h"
#include "../lib/pid-map.h"
#include "../lib/record-fields.h"
#include "../lib/record-json.h"
#include "../lib/symtab.h"
#include "../lib/syscall-names.h"
#include "../lib/waker.h"
#include "output-json.h"
#include "output-perfetto.h"

/* Pseudo processes above PID_MAX_LIMIT (4194304), so never a real pid. */
#define CPUS_PID 5000000
#define BLOCK_PID 6000000
#define METRICS_PID 7000000
/* Tracks per disk for requests in flight at once; beyond, the last lane's
 * slice starts where the one before it ends (its duration is in args). */
#define BLOCK_LANES 8
/* A thread's scheduling track: its tid with this bit (tids stay below 2^22). */
#define SCHED_TID_BIT 0x40000000u

struct name {
	uint32_t pid;
	bool sched; /* has a scheduling track */
	uint64_t sched_end; /* where the last slice on it ends */
	char comm[FR_REC_COMM_MAX + 1];
	char *exe; /* process name, from the exe; NULL: none */
};

struct running {
	bool open;
	uint64_t start;
	uint32_t pid, tid;
	char comm[FR_REC_COMM_MAX + 1];
};

struct fr_perfetto {
	FILE *out;
	bool first;       /* no event written yet */
	uint64_t base_ns; /* wall time of ts 0 */
	bool have_base;
	uint64_t last_ns;
	struct fr_pid_map threads; /* tid -> struct name */
	struct fr_pid_map procs;   /* pid -> struct name */
	struct running *cpu;       /* what runs on each CPU, from switches */
	unsigned ncpu;
	uint32_t devs[64];         /* block devices seen: index = disk */
	unsigned ndevs;
	/* requests in flight together overlap: each disk has lanes, a track
	 * each, and a request goes on the first lane free at its start */
	uint64_t lane_end[64][BLOCK_LANES];
	uint8_t nlanes[64];
	uint64_t events;
	uint64_t flows;            /* flow arrows drawn (wakers): their ids */
	struct fr_json_writer *json;
	struct fr_out line;        /* a record's JSON, in memory */
};

static void emit(struct fr_perfetto *p, struct json_object *ev)
{
	fputs(p->first ? "\n" : ",\n", p->out);
	fputs(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), p->out);
	json_object_put(ev);
	p->first = false;
	p->events++;
}

/* Microseconds since the base, exactly: "12.345" with its own text. */
static struct json_object *us(uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
	return json_object_new_double_s((double)ns / 1000.0, buf);
}

static struct json_object *event(struct fr_perfetto *p, const char *ph, const char *name, uint64_t wall_ns,
				 uint32_t pid, uint32_t tid)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "ph", json_object_new_string(ph));
	json_object_object_add(o, "ts", us(wall_ns > p->base_ns ? wall_ns - p->base_ns : 0));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	return o;
}

/* A slice or an instant: the event, its category, the field that makes it
 * one (@key: @value) and its args. */
static void timed(struct fr_perfetto *p, const char *ph, const char *name, const char *cat, uint64_t wall_ns,
		  uint32_t pid, uint32_t tid, const char *key, struct json_object *value, struct json_object *args)
{
	struct json_object *o = event(p, ph, name, wall_ns, pid, tid);

	json_object_object_add(o, "cat", json_object_new_string(cat));
	json_object_object_add(o, key, value);
	if (args)
		json_object_object_add(o, "args", args);
	emit(p, o);
}

static void slice(struct fr_perfetto *p, const char *name, const char *cat, uint64_t wall_ns, uint64_t dur_ns,
		  uint32_t pid, uint32_t tid, struct json_object *args)
{
	timed(p, "X", name, cat, wall_ns, pid, tid, "dur", us(dur_ns), args);
}

static void instant(struct fr_perfetto *p, const char *name, const char *cat, const char *scope, uint64_t wall_ns,
		    uint32_t pid, uint32_t tid, struct json_object *args)
{
	timed(p, "i", name, cat, wall_ns, pid, tid, "s", json_object_new_string(scope), args);
}

static void counter(struct fr_perfetto *p, const char *name, uint64_t wall_ns, struct json_object *args)
{
	struct json_object *o = event(p, "C", name, wall_ns, METRICS_PID, METRICS_PID);

	json_object_object_add(o, "args", args);
	emit(p, o);
}

static void metadata(struct fr_perfetto *p, const char *what, uint32_t pid, uint32_t tid, const char *value)
{
	struct json_object *o = json_object_new_object(), *args = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(what));
	json_object_object_add(o, "ph", json_object_new_string("M"));
	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "tid", json_object_new_int64(tid));
	/* comm and exe are bytes; json-c checks nothing: keep it valid UTF-8 */
	json_object_object_add(args, "name", json_object_new_string(value));
	json_object_object_add(o, "args", args);
	emit(p, o);
}

struct fr_perfetto *fr_perfetto_begin(FILE *out, unsigned ncpu)
{
	struct fr_perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cpu = calloc(ncpu ? ncpu : 1, sizeof(*p->cpu));
	if (!p->cpu || fr_json_writer_new(&p->json) < 0 || fr_out_init(&p->line, NULL) < 0) {
		fr_json_writer_free(p->json);
		free(p->cpu);
		free(p);
		return NULL;
	}
	p->ncpu = ncpu;
	p->out = out;
	p->first = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	return p;
}

/* Printable comm: bytes other than printable ASCII become '?'. */
static void clean_copy(char *dst, size_t n, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < n && i < len && src[i]; i++)
		dst[i] = (unsigned char)src[i] >= 0x20 && (unsigned char)src[i] < 0x7f ? src[i] : '?';
	dst[i] = 0;
}

static void remember(struct fr_perfetto *p, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct name *t, *pr;

	if (!r->pid && !r->tid)
		return; /* system-wide records, the idle task */
	t = fr_pid_map_get(&p->threads, r->tid);
	if (!t && (t = calloc(1, sizeof(*t))) && fr_pid_map_put(&p->threads, r->tid, t, NULL) < 0) {
		free(t);
		t = NULL;
	}
	if (t && r->comm_len) {
		t->pid = r->pid;
		clean_copy(t->comm, sizeof(t->comm), r->comm, r->comm_len);
	}
	pr = fr_pid_map_get(&p->procs, r->pid);
	if (!pr && (pr = calloc(1, sizeof(*pr))) && fr_pid_map_put(&p->procs, r->pid, pr, NULL) < 0) {
		free(pr);
		pr = NULL;
	}
	if (!pr)
		return;
	/* the main thread's comm names the process, else the exe */
	if (r->pid == r->tid && r->comm_len)
		clean_copy(pr->comm, sizeof(pr->comm), r->comm, r->comm_len);
	if (e->exe && e->exe_len && !pr->exe) {
		pr->exe = malloc(e->exe_len + 1);
		if (pr->exe)
			clean_copy(pr->exe, e->exe_len + 1, e->exe, e->exe_len);
	}
}

static unsigned dev_track(struct fr_perfetto *p, uint32_t dev)
{
	for (unsigned i = 0; i < p->ndevs; i++)
		if (p->devs[i] == dev)
			return i;
	if (p->ndevs < ELEMENTSOF(p->devs))
		p->devs[p->ndevs++] = dev;
	return p->ndevs - 1; /* beyond 64 disks they share the last track */
}

/* The track of a request on disk @d from *@start to *@start + *@dur, on
 * the first lane free by then; moves *@start (and shortens *@dur) when
 * every lane is busy. */
static uint32_t block_track(struct fr_perfetto *p, unsigned d, uint64_t *start, uint64_t *dur)
{
	unsigned l;

	for (l = 0; l < p->nlanes[d] && p->lane_end[d][l] > *start; l++)
		;
	if (l == BLOCK_LANES) {
		l = BLOCK_LANES - 1;
		uint64_t busy = MIN(p->lane_end[d][l] - *start, *dur);
		*start += busy;
		*dur -= busy;
	}
	if (l == p->nlanes[d])
		p->nlanes[d]++;
	p->lane_end[d][l] = *start + *dur;
	return BLOCK_PID + 1 + d * BLOCK_LANES + l;
}

static void close_running(struct fr_perfetto *p, unsigned cpu, uint64_t now)
{
	struct running *c = &p->cpu[cpu];
	struct json_object *args;

	if (!c->open)
		return;
	args = json_object_new_object();
	json_object_object_add(args, "pid", json_object_new_int64(c->pid));
	json_object_object_add(args, "tid", json_object_new_int64(c->tid));
	/* a CPU's switch times are in order (sched.bpf.c); not trusted */
	slice(p, c->comm, "sched", c->start, now > c->start ? now - c->start : 0, CPUS_PID, CPUS_PID + 1 + cpu, args);
	c->open = false;
}

static void metrics(struct fr_perfetto *p, const struct fr_window_entry *e)
{
	struct json_object *m = fr_record_metrics(&e->r), *v, *a;
	char name[64];

	if (!m)
		return;
	if (json_object_object_get_ex(m, "cpus", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *c = json_object_array_get_idx(v, i), *idle, *id;
			if (!json_object_object_get_ex(c, "idle", &idle) || !json_object_object_get_ex(c, "cpu", &id))
				continue;
			snprintf(name, sizeof(name), "cpu%d busy %%", json_object_get_int(id));
			a = json_object_new_object();
			json_object_object_add(a, "value", json_object_new_int(100 - json_object_get_int(idle)));
			counter(p, name, e->wall_ns, a);
		}
	if (json_object_object_get_ex(m, "memory", &v) && json_object_object_get_ex(v, "available_kb", &v)) {
		a = json_object_new_object();
		json_object_object_add(a, "MiB", json_object_new_int64(json_object_get_int64(v) / 1024));
		counter(p, "memory available", e->wall_ns, a);
	}
	if (json_object_object_get_ex(m, "load", &v) && json_object_array_length(v) == 3) {
		a = json_object_new_object();
		json_object_object_add(a, "1m", json_object_get(json_object_array_get_idx(v, 0)));
		json_object_object_add(a, "5m", json_object_get(json_object_array_get_idx(v, 1)));
		json_object_object_add(a, "15m", json_object_get(json_object_array_get_idx(v, 2)));
		counter(p, "load", e->wall_ns, a);
	}
	if (json_object_object_get_ex(m, "pressure", &v)) {
		a = json_object_new_object();
		json_object_object_foreach(v, res, obj) {
			struct json_object *some, *avg;
			if (json_object_object_get_ex(obj, "some", &some) && json_object_object_get_ex(some, "avg10", &avg))
				json_object_object_add(a, res, json_object_get(avg));
		}
		counter(p, "pressure some avg10 %", e->wall_ns, a);
	}
	if (json_object_object_get_ex(m, "pmu", &v) && json_object_object_get_ex(v, "ipc", &v)) {
		a = json_object_new_object();
		json_object_object_add(a, "ipc", json_object_get(v));
		counter(p, "instructions per cycle", e->wall_ns, a);
	}
	json_object_put(m);
}

static struct json_object *stack_args(struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
	struct json_object *a = json_object_new_object(), *st = json_object_new_array();
	char name[512];

	/* leaf first, as frctl's other formats, inlined functions named as
	 * the text format names them; kernel_frames still counts the first
	 * frames (they are never expanded) */
	for (int i = 0; i < n; i++) {
		fr_frame_name(&frames[i], true, name, sizeof(name));
		if (frames[i].inlined)
			strncat(name, " (inlined)", sizeof(name) - strlen(name) - 1);
		clean_copy(name, sizeof(name), name, strlen(name));
		json_object_array_add(st, json_object_new_string(name));
	}
	json_object_object_add(a, "stack", st);
	json_object_object_add(a, "kernel_frames", json_object_new_int(e->r.stack.kernel_frames));
	return a;
}

/* Off-CPU wait @e's waker into its slice's @args; a thread's also as a
 * slice of a microsecond on the waker's track at the wakeup, with its
 * stack, and a flow arrow from it to the wait (to the slice enclosing the
 * wakeup on the waiting thread's scheduling track). */
static void waker_flow(struct fr_perfetto *p, struct fr_window *w, const struct fr_window_entry *e,
		       struct json_object *args)
{
	const struct fr_record_waker *k = &e->r.sched.waker;
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_waker_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
	uint64_t wake = e->wall_ns + k->delay_ns;
	struct fr_window_entry v = *e;
	struct json_object *o;
	char label[128], name[160];

	fr_waker_label(k, n > 0 ? frames : NULL, n, label, sizeof(label));
	clean_copy(label, sizeof(label), label, strlen(label));
	json_object_object_add(args, "waker", json_object_new_string(label));
	json_object_object_add(args, "waker_kind", json_object_new_string(fr_waker_kind(k, n > 0 ? frames : NULL, n)));
	if (!fr_waker_is_thread(k, n > 0 ? frames : NULL, n))
		return;
	json_object_object_add(args, "waker_pid", json_object_new_int64(k->pid));
	json_object_object_add(args, "waker_tid", json_object_new_int64(k->tid));
	fr_record_waker_view(&e->r, &v.r);
	v.wall_ns = wake;
	v.exe = NULL; /* the wakee's */
	v.exe_len = 0;
	remember(p, &v);
	snprintf(name, sizeof(name), "wakes %s[%" PRIu32 "]", e->r.comm, e->r.tid);
	clean_copy(name, sizeof(name), name, strlen(name));
	slice(p, name, "wakeup", wake, 1000, k->pid, k->tid, stack_args(w, &v));
	p->flows++;
	o = event(p, "s", "wakeup", wake, k->pid, k->tid);
	json_object_object_add(o, "cat", json_object_new_string("wakeup"));
	json_object_object_add(o, "id", json_object_new_uint64(p->flows));
	emit(p, o);
	o = event(p, "f", "wakeup", wake, e->r.pid, e->r.tid | SCHED_TID_BIT);
	json_object_object_add(o, "cat", json_object_new_string("wakeup"));
	json_object_object_add(o, "id", json_object_new_uint64(p->flows));
	json_object_object_add(o, "bp", json_object_new_string("e"));
	emit(p, o);
}

void fr_perfetto_add(struct fr_perfetto *p, struct fr_window *w, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct json_object *a;
	char buf[128];

	if (!p->have_base) {
		p->base_ns = e->wall_ns;
		p->have_base = true;
	}
	p->last_ns = MAX(p->last_ns, e->wall_ns + fr_record_duration_ns(r));
	remember(p, e);
	switch ((enum fr_record_type)r->type) {
	case FR_REC_SYSCALL: {
		const char *nm = fr_syscall_name(r->syscall.nr);
		a = json_object_new_object();
		json_object_object_add(a, "nr", json_object_new_int64(r->syscall.nr));
		json_object_object_add(a, "ret", json_object_new_int64(r->syscall.ret));
		json_object_object_add(a, "duration_ns", json_object_new_uint64(r->syscall.duration_ns));
		if (!nm) {
			snprintf(buf, sizeof(buf), "syscall %u", r->syscall.nr);
			nm = buf;
		}
		slice(p, nm, "syscall", e->wall_ns, r->syscall.duration_ns, r->pid, r->tid, a);
		break;
	}
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
		a = json_object_new_object();
		json_object_object_add(a, "duration_ns", json_object_new_uint64(r->sched.duration_ns));
		if (r->type == FR_REC_OFFCPU && r->sched.syscall_nr >= 0) {
			const char *nm = fr_syscall_name((unsigned)r->sched.syscall_nr);
			json_object_object_add(a, "syscall", nm ? json_object_new_string(nm) : NULL);
			json_object_object_add(a, "nr", json_object_new_int64(r->sched.syscall_nr));
		}
		{
			/* The scheduler's clock, converted in BPF with an offset
			 * that moves by a few us, and a tick old at times
			 * (sched.bpf.c): one interval may start that much before
			 * the last one ended.  A slice cannot; it starts where
			 * the last one ends (the exact duration is in its args).
			 * A run-queue wait ends with the off-CPU interval it is
			 * part of: nested. */
			struct name *t = fr_pid_map_get(&p->threads, r->tid);
			uint64_t start = e->wall_ns, dur = r->sched.duration_ns;

			if (t && start < t->sched_end && start + dur > t->sched_end) {
				dur -= t->sched_end - start;
				start = t->sched_end;
			}
			if (r->type == FR_REC_OFFCPU && r->sched.waker.context)
				waker_flow(p, w, e, a);
			slice(p, r->type == FR_REC_OFFCPU ? "off-CPU" : "run queue", "sched", start, dur,
			      r->pid, r->tid | SCHED_TID_BIT, a);
			if (t) {
				t->sched = true;
				t->sched_end = MAX(t->sched_end, start + dur);
			}
		}
		break;
	case FR_REC_BLOCK:
		a = json_object_new_object();
		json_object_object_add(a, "pid", json_object_new_int64(r->pid));
		json_object_object_add(a, "tid", json_object_new_int64(r->tid));
		json_object_object_add(a, "sector", r->block.sector == UINT64_MAX ? NULL : json_object_new_uint64(r->block.sector));
		json_object_object_add(a, "bytes", json_object_new_int64(r->block.bytes));
		json_object_object_add(a, "duration_ns", json_object_new_uint64(r->block.duration_ns));
		if (r->block.error)
			json_object_object_add(a, "error", json_object_new_int(r->block.error));
		snprintf(buf, sizeof(buf), "%s %u KiB", fr_block_op_name(r->block.op), r->block.bytes / 1024);
		{
			uint64_t start = e->wall_ns, dur = r->block.duration_ns;
			uint32_t track = block_track(p, dev_track(p, r->block.dev), &start, &dur);
			slice(p, buf, "block", start, dur, BLOCK_PID, track, a);
		}
		break;
	case FR_REC_SWITCH:
		if (r->cpu >= p->ncpu)
			break;
		close_running(p, r->cpu, e->wall_ns);
		if (r->sw.next_pid || r->sw.next_tid) {
			struct running *c = &p->cpu[r->cpu];
			*c = (struct running){ .open = true, .start = e->wall_ns, .pid = r->sw.next_pid, .tid = r->sw.next_tid };
			clean_copy(c->comm, sizeof(c->comm), r->sw.next_comm, r->sw.next_comm_len);
		}
		break;
	case FR_REC_SAMPLE:
		instant(p, "sample", "sample", "t", e->wall_ns, CPUS_PID, CPUS_PID + 1 + r->cpu, stack_args(w, e));
		break;
	case FR_REC_GAP:
		a = json_object_new_object();
		json_object_object_add(a, "lost", json_object_new_uint64(r->gap.lost));
		instant(p, "gap: records lost", "gap", "t", e->wall_ns, CPUS_PID, CPUS_PID + 1 + r->cpu, a);
		break;
	case FR_REC_METRICS:
		metrics(p, e);
		break;
	case FR_REC_MARK:
	case FR_REC_TRIGGER:
	case FR_REC_EXEC:
	case FR_REC_EXIT:
	case FR_REC_FORK:
	case FR_REC_SIGNAL:
	case FR_REC_OOM:
	case FR_REC_TCP: {
		/* the record's own JSON carries its fields: its --format json
		 * line, as it is */
		struct json_object *j = NULL, *v;
		/* and what the idle task did (a TCP event in a softirq on an
		 * idle CPU): no process's, and pid 0 has no name (remember()) */
		bool global = r->type == FR_REC_MARK || r->type == FR_REC_TRIGGER || (!r->pid && !r->tid);
		const char *nm = fr_record_type_name(r->type), *s;
		char sig[32], *line;

		p->line.len = 0;
		if (fr_window_entry_json(p->json, &p->line, w, e) == 0 && !p->line.err) {
			p->line.p[p->line.len - 1] = 0; /* its newline */
			line = strdup(p->line.p);
			j = line ? json_object_new_object() : NULL;
			if (j)
				json_object_set_serializer(j, json_object_userdata_to_json_string, line,
							   json_object_free_userdata);
			else
				free(line);
		}
		/* marks and triggers are named by their text (as it is in the
		 * JSON, invalid UTF-8 replaced), signals and TCP events by theirs */
		if ((r->type == FR_REC_MARK || r->type == FR_REC_TRIGGER) && j &&
		    (v = json_tokener_parse(p->line.p))) {
			struct json_object *t;
			if (json_object_object_get_ex(v, r->type == FR_REC_MARK ? "text" : "rule", &t))
				snprintf(buf, sizeof(buf), "%s: %s", nm, json_object_get_string(t));
			else
				snprintf(buf, sizeof(buf), "%s", nm);
			json_object_put(v);
		} else if (r->type == FR_REC_SIGNAL && (s = fr_signal_name((int)r->signal.sig, sig, sizeof(sig)))) {
			/* where it was raised, in the name; the whole stack is
			 * in the record's "stack" */
			struct fr_frame f[FR_FRAMES_EXPANDED_MAX];
			int n = fr_window_frames(w, e, f, FR_FRAMES_EXPANDED_MAX);
			char name[256];
			if (n > 0) {
				fr_frame_name(&f[fr_crash_first_frame(r, n)], false, name, sizeof(name));
				clean_copy(name, sizeof(name), name, strlen(name));
				snprintf(buf, sizeof(buf), "%s in %s", s, name);
			} else
				snprintf(buf, sizeof(buf), "%s", s);
		}
		else if (r->type == FR_REC_TCP)
			snprintf(buf, sizeof(buf), "tcp %s", fr_tcp_event_name(r->tcp.event));
		else
			snprintf(buf, sizeof(buf), "%s", nm);
		instant(p, buf, nm, global ? "g" : "t", e->wall_ns, global ? 0 : r->pid, global ? 0 : r->tid, j);
		break;
	}
	FR_REC_META_CASES
		break;
	}
}

static void free_names(struct fr_pid_map *m)
{
	size_t i = 0;
	struct name *n;

	while ((n = fr_pid_map_next(m, &i, NULL))) {
		free(n->exe);
		free(n);
	}
	fr_pid_map_done(m);
}

void fr_perfetto_end(struct fr_perfetto *p, const uint8_t *boot_id)
{
	struct name *n;
	uint32_t id;
	size_t i = 0;
	char buf[64];

	for (unsigned c = 0; c < p->ncpu; c++)
		close_running(p, c, p->last_ns);
	/* names: processes, threads, and the pseudo tracks */
	while ((n = fr_pid_map_next(&p->procs, &i, &id))) {
		const char *base = n->exe ? strrchr(n->exe, '/') : NULL;
		snprintf(buf, sizeof(buf), "%s", n->comm[0] ? n->comm : base ? base + 1 : n->exe ? n->exe : "?");
		metadata(p, "process_name", id, id, buf);
	}
	i = 0;
	while ((n = fr_pid_map_next(&p->threads, &i, &id))) {
		metadata(p, "thread_name", n->pid, id, n->comm[0] ? n->comm : "?");
		if (n->sched) {
			snprintf(buf, sizeof(buf), "%s sched", n->comm[0] ? n->comm : "?");
			metadata(p, "thread_name", n->pid, id | SCHED_TID_BIT, buf);
		}
	}
	metadata(p, "process_name", CPUS_PID, CPUS_PID, "CPUs");
	for (unsigned c = 0; c < p->ncpu; c++) {
		snprintf(buf, sizeof(buf), "cpu %u", c);
		metadata(p, "thread_name", CPUS_PID, CPUS_PID + 1 + c, buf);
	}
	if (p->ndevs) {
		metadata(p, "process_name", BLOCK_PID, BLOCK_PID, "Block I/O");
		for (unsigned d = 0; d < p->ndevs; d++) {
			char dev[32];
			fr_format_dev(p->devs[d], dev, sizeof(dev));
			for (unsigned l = 0; l < p->nlanes[d]; l++) {
				if (l == 0)
					snprintf(buf, sizeof(buf), "disk %s", dev);
				else
					snprintf(buf, sizeof(buf), "disk %s (%u in flight)", dev, l + 1);
				metadata(p, "thread_name", BLOCK_PID, BLOCK_PID + 1 + d * BLOCK_LANES + l, buf);
			}
		}
	}
	metadata(p, "process_name", METRICS_PID, METRICS_PID, "System metrics");
	fputs("\n],\"otherData\":", p->out);
	{
		struct json_object *o = json_object_new_object();
		char t[64];
		json_object_object_add(o, "producer", json_object_new_string("flightrec " FR_VERSION));
		json_object_object_add(o, "start_time",
				       json_object_new_string(p->have_base ? fr_format_rfc3339(p->base_ns, t, sizeof(t)) : ""));
		if (boot_id)
			json_object_object_add(o, "boot_id", json_object_new_string(fr_format_boot_id(boot_id, t, sizeof(t))));
		json_object_object_add(o, "events", json_object_new_uint64(p->events));
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), p->out);
		json_object_put(o);
	}
	fputs("}\n", p->out);
	free_names(&p->procs);
	free_names(&p->threads);
	fr_json_writer_free(p->json);
	free(p->line.p);
	free(p->cpu);
	free(p);
}
