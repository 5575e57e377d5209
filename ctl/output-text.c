/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --format text: one line per record for people; may change between
 * versions (scripts use --format json). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../lib/macro.h"
#include "../lib/out-buf.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/syscall-names.h"
#include "../lib/wait-kind.h"
#include "../lib/waker.h"
#include "output-text.h"

/* Record types with a column of their own: the name padded to 8, and a
 * space. */
#define TYPE_COLUMNS 64

struct fr_text {
	unsigned flags;
	char type_col[TYPE_COLUMNS][16];
	uint8_t type_col_len[TYPE_COLUMNS];
	/* the local date and time of the last second printed */
	uint64_t sec;
	char stamp[32];
	size_t stamp_len;
};

struct fr_text *fr_text_new(unsigned flags)
{
	struct fr_text *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->flags = flags;
	t->sec = UINT64_MAX;
	for (unsigned i = 0; i < TYPE_COLUMNS; i++) {
		int n = snprintf(t->type_col[i], sizeof(t->type_col[i]), "%-8s ", fr_record_type_name((uint16_t)i));
		t->type_col_len[i] = (uint8_t)MIN((size_t)MAX(n, 0), sizeof(t->type_col[i]) - 1);
	}
	return t;
}

struct fr_text *fr_text_free(struct fr_text *t)
{
	free(t);
	return NULL;
}

/* Local time with milliseconds, and the CPU column; the seconds are
 * formatted once each.  Written in place: bytes put together on the
 * stack and copied would wait for each other (store forwarding). */
static void print_local_time(struct fr_text *t, struct fr_out *o, uint64_t wall_ns, uint32_t cpu)
{
	uint64_t sec = wall_ns / NSEC_PER_SEC;
	unsigned ms = (unsigned)(wall_ns % NSEC_PER_SEC / NSEC_PER_MSEC);
	char *d;

	if (sec != t->sec) {
		time_t tt = (time_t)sec;
		struct tm tm;

		localtime_r(&tt, &tm);
		t->stamp_len = strftime(t->stamp, sizeof(t->stamp),
					t->flags & FR_TEXT_NO_DATE ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
		t->sec = sec;
	}
	d = fr_out_room(o, sizeof(t->stamp) + 16);
	memcpy(d, t->stamp, sizeof(t->stamp));
	d += t->stamp_len;
	d[0] = '.';
	d[1] = (char)('0' + ms / 100);
	d[2] = (char)('0' + ms / 10 % 10);
	d[3] = (char)('0' + ms % 10);
	memcpy(d + 4, " cpu", 4);
	o->len += t->stamp_len + 8;
	if (cpu < 10) {
		d[8] = (char)('0' + cpu);
		d[9] = ' ';
		d[10] = ' ';
		o->len += 3;
	} else if (cpu < 100) {
		d[8] = (char)('0' + cpu / 10);
		d[9] = (char)('0' + cpu % 10);
		d[10] = ' ';
		o->len += 3;
	} else {
		fr_out_u64(o, cpu);
		fr_out_putc(o, ' ');
	}
}

bool fr_text_colour(FILE *out)
{
	int fd = fileno(out);
	const char *term = getenv("TERM");

	return fd >= 0 && isatty(fd) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

/* SGR colour of a record type: what fails red, process life green,
 * waits cyan, what people wrote or fired magenta, the rest dim.  (Every
 * type has its case: a new one is a compile error until it has one.) */
static const char *type_colour(uint16_t type)
{
	switch ((enum fr_record_type)type) {
	case FR_REC_GAP: return "\033[1;31m";
	case FR_REC_OOM:
	case FR_REC_SIGNAL: return "\033[31m";
	case FR_REC_EXEC:
	case FR_REC_EXIT:
	case FR_REC_FORK: return "\033[32m";
	case FR_REC_SYSCALL:
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK: return "\033[36m";
	case FR_REC_MARK:
	case FR_REC_TRIGGER: return "\033[1;35m";
	case FR_REC_TCP: return "\033[33m";
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_METRICS:
	FR_REC_META_CASES break;
	}
	return "\033[2m";
}

static void print_duration(struct fr_out *o, uint64_t ns)
{
	o->len += fr_format_duration_n(ns, fr_out_room(o, FR_DURATION_MAX));
}

/* A system call's name, or syscall_NR for a number without one. */
static void print_syscall(struct fr_out *o, unsigned nr)
{
	size_t len;
	const char *name = fr_syscall_name_n(nr, &len);

	if (name)
		fr_out_write(o, name, len);
	else {
		fr_out_puts(o, "syscall_");
		fr_out_u64(o, nr);
	}
}

/* The frames of @e, leaf first as a debugger prints a backtrace, each
 * "name (module)" and each after @sep but the first (@sep_first: the first
 * too). */
static void print_frames(struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e, const char *sep,
			 bool sep_first)
{
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
	char name[512];

	for (int i = 0; i < n; i++) {
		uint32_t ml;
		const char *m = fr_frame_module_base(&frames[i], &ml);
		if (i || sep_first)
			fr_out_puts(o, sep);
		fr_frame_name(&frames[i], true, name, sizeof(name));
		fr_out_safe(o, name, strlen(name));
		/* its module is the next frame's, printed there */
		if (frames[i].inlined)
			fr_out_puts(o, " (inlined)");
		else if (frames[i].sym && m) {
			fr_out_puts(o, frames[i].module_brackets ? " ([" : " (");
			fr_out_safe(o, m, ml);
			fr_out_puts(o, frames[i].module_brackets ? "])" : ")");
		}
	}
	if (n <= 0 && !sep_first)
		fr_out_puts(o, "no frames");
}

/* ", woken by LABEL[pid]" of offcpu record @e, who ended the wait; with
 * @stack instead its stack, on lines of their own. */
static void print_waker(struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e, bool stack)
{
	const struct fr_record_waker *k = &e->r.sched.waker;
	struct fr_frame frames[FR_FRAMES_EXPANDED_MAX];
	int n = fr_window_waker_frames(w, e, frames, FR_FRAMES_EXPANDED_MAX);
	char label[128];

	if (stack) {
		struct fr_window_entry v = *e;

		fr_out_puts(o, "\n    woken by:");
		if (k->no_stack)
			fr_out_puts(o, " [stack not taken: over the budget of stacks a second]");
		fr_record_waker_view(&e->r, &v.r);
		print_frames(o, w, &v, "\n      ", true);
		return;
	}
	fr_out_puts(o, ", woken by ");
	fr_out_safe(o, label, fr_waker_label(k, n > 0 ? frames : NULL, n, label, sizeof(label)));
	/* (an interrupt's task is only the one it interrupted) */
	if (fr_waker_is_thread(k, n > 0 ? frames : NULL, n) ||
	    strcmp(fr_waker_kind(k, n > 0 ? frames : NULL, n), "unknown") == 0) {
		fr_out_printf(o, "[%" PRIu32, k->pid);
		if (k->tid != k->pid)
			fr_out_printf(o, "/%" PRIu32, k->tid);
		fr_out_putc(o, ']');
	}
}

void fr_text_print(struct fr_text *t, struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	char buf[64];

	print_local_time(t, o, e->wall_ns, r->cpu);
	if (t->flags & FR_TEXT_COLOUR) {
		fr_out_puts(o, type_colour(r->type));
		fr_out_pad(o, fr_record_type_name(r->type), 8);
		fr_out_write(o, "\033[0m ", 5);
	} else if (r->type < TYPE_COLUMNS) {
		memcpy(fr_out_room(o, sizeof(t->type_col[0])), t->type_col[r->type], sizeof(t->type_col[0]));
		o->len += t->type_col_len[r->type];
	}
	else {
		fr_out_pad(o, fr_record_type_name(r->type), 8);
		fr_out_putc(o, ' ');
	}
	if (r->type != FR_REC_GAP) {
		fr_out_safe16(o, r->comm, r->comm_len);
		fr_out_putc(o, '[');
		fr_out_u64(o, r->pid);
		if (r->tid != r->pid) {
			fr_out_putc(o, '/');
			fr_out_u64(o, r->tid);
		}
		fr_out_write(o, "] ", 2);
	}
	/* (every type has its case: a new one is a compile error until it has one) */
	switch ((enum fr_record_type)r->type) {
	case FR_REC_EXEC: {
		fr_out_puts(o, "filename=");
		fr_out_safe(o, r->exec.filename, r->exec.filename_len);
		fr_out_puts(o, " argv=[");
		fr_out_safe_list(o, r->exec.args, r->exec.args_len, ' ');
		fr_out_puts(o, r->flags & FR_REC_F_ARGS_CUT ? " …] ppid=" : "] ppid=");
		fr_out_u64(o, r->exec.ppid);
		break;
	}
	case FR_REC_EXIT: {
		int sig = r->exit.status & 0x7f;
		if (sig) {
			fr_out_puts(o, "killed by ");
			fr_out_puts(o, fr_signal_name(sig, buf, sizeof(buf)));
			if (r->exit.status & 0x80)
				fr_out_puts(o, " (core dumped)");
		} else {
			fr_out_puts(o, "exit_code=");
			fr_out_u64(o, (r->exit.status >> 8) & 0xff);
		}
		break;
	}
	case FR_REC_FORK:
		fr_out_puts(o, "child_pid=");
		fr_out_u64(o, r->fork.child_pid);
		break;
	case FR_REC_SYSCALL: {
		print_syscall(o, r->syscall.nr);
		fr_out_puts(o, " took ");
		print_duration(o, r->syscall.duration_ns);
		fr_out_puts(o, " ret=");
		fr_out_i64(o, r->syscall.ret);
		break;
	}
	case FR_REC_OFFCPU:
		fr_out_puts(o, "blocked ");
		/* D: the task needed what it waited for (I/O, a page) */
		if (fr_task_state_name(r->sched.state) && strcmp(fr_task_state_name(r->sched.state), "S") != 0) {
			fr_out_puts(o, "(");
			fr_out_puts(o, fr_task_state_name(r->sched.state));
			fr_out_puts(o, ") ");
		}
		if (r->sched.syscall_nr >= 0) {
			fr_out_puts(o, "in ");
			print_syscall(o, (unsigned)r->sched.syscall_nr);
			fr_out_puts(o, "() ");
		}
		fr_out_puts(o, "for ");
		print_duration(o, r->sched.duration_ns);
		if (r->sched.waker.context)
			print_waker(o, w, e, false);
		break;
	case FR_REC_RUNQ:
		fr_out_puts(o, "waited for a CPU for ");
		print_duration(o, r->sched.duration_ns);
		break;
	case FR_REC_SAMPLE:
		print_frames(o, w, e, " <- ", false);
		break;
	case FR_REC_SWITCH:
		fr_out_puts(o, r->sw.prev_state ? "blocks -> " : "preempted -> ");
		fr_out_safe(o, r->sw.next_comm, r->sw.next_comm_len);
		fr_out_putc(o, '[');
		fr_out_u64(o, r->sw.next_pid);
		fr_out_putc(o, '/');
		fr_out_u64(o, r->sw.next_tid);
		fr_out_putc(o, ']');
		break;
	case FR_REC_BLOCK: {
		char dev[32];
		fr_out_printf(o, "%s %s sector=%" PRIu64 " bytes=%u took ", fr_format_dev(r->block.dev, dev, sizeof(dev)),
			      fr_block_op_name(r->block.op), r->block.sector, r->block.bytes);
		print_duration(o, r->block.duration_ns);
		if (r->block.error)
			fr_out_puts(o, " ERROR");
		break;
	}
	case FR_REC_OOM:
		fr_out_puts(o, "OOM-killed, memcg=");
		fr_out_safe(o, r->oom.memcg_len ? r->oom.memcg : "?", r->oom.memcg_len ? r->oom.memcg_len : 1);
		fr_out_printf(o, " rss=%" PRIu64 "kB", r->oom.rss_kb);
		break;
	case FR_REC_SIGNAL: {
		const char *code = fr_signal_code_name((int)r->signal.sig, r->signal.code);
		fr_out_puts(o, fr_signal_name((int)r->signal.sig, buf, sizeof(buf)));
		if (code || (r->flags & FR_REC_F_FAULT_ADDR)) {
			fr_out_puts(o, " (");
			if (code)
				fr_out_puts(o, code);
			else
				fr_out_printf(o, "code %d", r->signal.code);
			if (r->flags & FR_REC_F_FAULT_ADDR)
				fr_out_printf(o, ", address 0x%" PRIx64, r->signal.addr);
			fr_out_putc(o, ')');
		}
		fr_out_puts(o, " from ");
		fr_out_safe(o, r->signal.sender_comm, r->signal.sender_comm_len);
		fr_out_printf(o, "[%u", r->signal.sender_pid);
		if (r->signal.sender_tid != r->signal.sender_pid)
			fr_out_printf(o, "/%u", r->signal.sender_tid);
		fr_out_putc(o, ']');
		break;
	}
	case FR_REC_TCP: {
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		fr_out_printf(o, "%s %s:%u -> %s:%u %s", fr_tcp_event_name(r->tcp.event),
			      fr_format_tcp_addr(r, r->tcp.saddr, a, sizeof(a)), r->tcp.sport,
			      fr_format_tcp_addr(r, r->tcp.daddr, b, sizeof(b)), r->tcp.dport,
			      fr_tcp_state_name(r->tcp.state));
		break;
	}
	case FR_REC_MARK:
		fr_out_putc(o, '"');
		fr_out_safe(o, r->mark.text, r->mark.text_len);
		fr_out_putc(o, '"');
		break;
	case FR_REC_METRICS:
		fr_out_safe(o, r->metrics.json, MIN(r->metrics.json_len, 200u));
		if (r->metrics.json_len > 200)
			fr_out_puts(o, "…");
		break;
	case FR_REC_TRIGGER:
		fr_out_puts(o, "rule ");
		fr_out_safe(o, r->trigger.rule, r->trigger.rule_len);
		fr_out_puts(o, " fired");
		if (r->trigger.cause_type) {
			fr_out_puts(o, " on ");
			fr_out_puts(o, fr_record_type_name(r->trigger.cause_type));
		}
		fr_out_puts(o, " -> incident ");
		fr_out_safe(o, r->trigger.incident, r->trigger.incident_len);
		break;
	case FR_REC_GAP:
		fr_out_printf(o, "*** %" PRIu64 " records lost on this CPU ***", r->gap.lost);
		break;
	FR_REC_META_CASES /* metadata: names what the others print */
		break;
	}
	if (e->cgroup && r->type != FR_REC_GAP) {
		fr_out_puts(o, " cgroup=");
		fr_out_safe(o, e->cgroup, e->cgroup_len);
	}
	/* on lines of their own under the record's */
	if (r->type == FR_REC_OFFCPU && (t->flags & FR_TEXT_STACKS)) {
		print_frames(o, w, e, "\n    ", true);
		if (r->sched.waker.context)
			print_waker(o, w, e, true);
	}
	/* where it crashed, or who sent it from where: always */
	if (r->type == FR_REC_SIGNAL && !(t->flags & FR_TEXT_ONE_LINE)) {
		if (r->signal.stack == FR_SIGNAL_STACK_OVER)
			fr_out_puts(o, "\n    [stack not taken: over the budget of stacks a second]");
		else
			print_frames(o, w, e, "\n    ", true);
	}
	fr_out_putc(o, '\n');
}
