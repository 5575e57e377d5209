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
#include "../lib/syscall-names.h"
#include "frctl.h"

struct fr_text {
	unsigned flags;
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
	return t;
}

struct fr_text *fr_text_free(struct fr_text *t)
{
	free(t);
	return NULL;
}

/* Local time with milliseconds; the seconds are formatted once each. */
static void print_local_time(struct fr_text *t, struct fr_out *o, uint64_t wall_ns)
{
	uint64_t sec = wall_ns / NSEC_PER_SEC;
	unsigned ms = (unsigned)(wall_ns % NSEC_PER_SEC / NSEC_PER_MSEC);
	char frac[4] = { '.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10) };

	if (sec != t->sec) {
		time_t tt = (time_t)sec;
		struct tm tm;

		localtime_r(&tt, &tm);
		t->stamp_len = strftime(t->stamp, sizeof(t->stamp),
					t->flags & FR_TEXT_NO_DATE ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
		t->sec = sec;
	}
	fr_out_write(o, t->stamp, t->stamp_len);
	fr_out_write(o, frac, sizeof(frac));
}

bool fr_text_colour(FILE *out)
{
	int fd = fileno(out);
	const char *term = getenv("TERM");

	return fd >= 0 && isatty(fd) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

/* SGR colour of a record type: what fails red, process life green,
 * waits cyan, what people wrote or fired magenta. */
static const char *type_colour(uint16_t type)
{
	switch (type) {
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
	default: return "\033[2m";
	}
}

static void print_duration(struct fr_out *o, uint64_t ns)
{
	char buf[32];

	fr_out_puts(o, fr_format_duration(ns, buf, sizeof(buf)));
}

static void print_frames(struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e)
{
	struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
	int n = fr_window_frames(w, e, frames, FR_SAMPLE_FRAMES_MAX);
	char name[512];

	/* leaf first, as a debugger prints a backtrace */
	for (int i = 0; i < n; i++) {
		uint32_t ml;
		const char *m = fr_frame_module_base(&frames[i], &ml);
		if (i)
			fr_out_write(o, " <- ", 4);
		fr_frame_name(&frames[i], true, name, sizeof(name));
		fr_out_safe(o, name, strlen(name));
		if (frames[i].sym && m) {
			fr_out_puts(o, frames[i].module_brackets ? " ([" : " (");
			fr_out_safe(o, m, ml);
			fr_out_puts(o, frames[i].module_brackets ? "])" : ")");
		}
	}
	if (n <= 0)
		fr_out_puts(o, "no frames");
}

void fr_text_print(struct fr_text *t, struct fr_out *o, struct fr_window *w, const struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	char buf[64];

	print_local_time(t, o, e->wall_ns);
	fr_out_write(o, " cpu", 4);
	fr_out_u64_pad(o, r->cpu, 2);
	fr_out_putc(o, ' ');
	if (t->flags & FR_TEXT_COLOUR) {
		fr_out_puts(o, type_colour(r->type));
		fr_out_pad(o, fr_record_type_name(r->type), 8);
		fr_out_write(o, "\033[0m ", 5);
	} else {
		fr_out_pad(o, fr_record_type_name(r->type), 8);
		fr_out_putc(o, ' ');
	}
	if (r->type != FR_REC_GAP) {
		fr_out_safe(o, r->comm, r->comm_len);
		fr_out_putc(o, '[');
		fr_out_u64(o, r->pid);
		if (r->tid != r->pid) {
			fr_out_putc(o, '/');
			fr_out_u64(o, r->tid);
		}
		fr_out_write(o, "] ", 2);
	}
	switch (r->type) {
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
		const char *name = fr_syscall_name(r->syscall.nr);
		if (name)
			fr_out_puts(o, name);
		else {
			fr_out_puts(o, "syscall_");
			fr_out_u64(o, r->syscall.nr);
		}
		fr_out_puts(o, " took ");
		print_duration(o, r->syscall.duration_ns);
		fr_out_puts(o, " ret=");
		fr_out_i64(o, r->syscall.ret);
		break;
	}
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
		fr_out_puts(o, r->type == FR_REC_OFFCPU ? "blocked for " : "waited for a CPU for ");
		print_duration(o, r->sched.duration_ns);
		break;
	case FR_REC_SAMPLE:
		print_frames(o, w, e);
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
	case FR_REC_SIGNAL:
		fr_out_puts(o, fr_signal_name((int)r->signal.sig, buf, sizeof(buf)));
		fr_out_puts(o, " from ");
		fr_out_safe(o, r->signal.sender_comm, r->signal.sender_comm_len);
		fr_out_printf(o, "[%u]", r->signal.sender_pid);
		break;
	case FR_REC_TCP: {
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		fr_out_printf(o, "%s %s:%u -> %s:%u %s", fr_tcp_event_name(r->tcp.event),
			      fr_format_addr(r->tcp.family, r->tcp.saddr, a, sizeof(a)), r->tcp.sport,
			      fr_format_addr(r->tcp.family, r->tcp.daddr, b, sizeof(b)), r->tcp.dport,
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
		fr_out_puts(o, " fired -> incident ");
		fr_out_safe(o, r->trigger.incident, r->trigger.incident_len);
		break;
	case FR_REC_GAP:
		fr_out_printf(o, "*** %" PRIu64 " records lost on this CPU ***", r->gap.lost);
		break;
	}
	if (e->cgroup && r->type != FR_REC_GAP) {
		fr_out_puts(o, " cgroup=");
		fr_out_safe(o, e->cgroup, e->cgroup_len);
	}
	fr_out_putc(o, '\n');
}
