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
#include "../lib/parse.h"
#include "../lib/syscall-names.h"
#include "frctl.h"

static void print_local_time(FILE *out, uint64_t wall_ns, bool date)
{
	time_t t = (time_t)(wall_ns / NSEC_PER_SEC);
	struct tm tm;
	char buf[32];

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	fprintf(out, "%s.%03u", buf, (unsigned)(wall_ns % NSEC_PER_SEC / NSEC_PER_MSEC));
}

/* Prints bytes, escaping what a terminal would interpret. */
static void print_safe(FILE *out, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch < 0x20 || ch == 0x7f || ch == '\\')
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
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

void fr_record_print_text(FILE *out, struct fr_window *w, const struct fr_window_entry *e, unsigned flags)
{
	const struct fr_record *r = &e->r;
	char buf[64];

	print_local_time(out, e->wall_ns, !(flags & FR_TEXT_NO_DATE));
	if (flags & FR_TEXT_COLOUR)
		fprintf(out, " cpu%-2u %s%-8s\033[0m ", r->cpu, type_colour(r->type), fr_record_type_name(r->type));
	else
		fprintf(out, " cpu%-2u %-8s ", r->cpu, fr_record_type_name(r->type));
	if (r->type != FR_REC_GAP) {
		print_safe(out, r->comm, r->comm_len);
		fprintf(out, "[%u", r->pid);
		if (r->tid != r->pid)
			fprintf(out, "/%u", r->tid);
		fputs("] ", out);
	}
	switch (r->type) {
	case FR_REC_EXEC: {
		fputs("filename=", out);
		print_safe(out, r->exec.filename, r->exec.filename_len);
		fputs(" argv=[", out);
		for (size_t i = 0; i < r->exec.args_len;) {
			size_t l = strnlen(r->exec.args + i, r->exec.args_len - i);
			if (i)
				fputc(' ', out);
			print_safe(out, r->exec.args + i, l);
			i += l + 1;
		}
		fprintf(out, "%s] ppid=%u", r->flags & FR_REC_F_ARGS_CUT ? " …" : "", r->exec.ppid);
		break;
	}
	case FR_REC_EXIT: {
		int sig = r->exit.status & 0x7f;
		if (sig)
			fprintf(out, "killed by %s%s", fr_signal_name(sig, buf, sizeof(buf)),
				r->exit.status & 0x80 ? " (core dumped)" : "");
		else
			fprintf(out, "exit_code=%u", (r->exit.status >> 8) & 0xff);
		break;
	}
	case FR_REC_FORK:
		fprintf(out, "child_pid=%u", r->fork.child_pid);
		break;
	case FR_REC_SYSCALL: {
		const char *name = fr_syscall_name(r->syscall.nr);
		if (name)
			fprintf(out, "%s", name);
		else
			fprintf(out, "syscall_%u", r->syscall.nr);
		fprintf(out, " took %s ret=%" PRId64, fr_format_duration(r->syscall.duration_ns, buf, sizeof(buf)),
			r->syscall.ret);
		break;
	}
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
		fprintf(out, "%s %s", r->type == FR_REC_OFFCPU ? "blocked for" : "waited for a CPU for",
			fr_format_duration(r->sched.duration_ns, buf, sizeof(buf)));
		break;
	case FR_REC_SAMPLE: {
		struct fr_frame frames[FR_SAMPLE_FRAMES_MAX];
		int n = fr_window_frames(w, e, frames, FR_SAMPLE_FRAMES_MAX);
		char name[512];
		/* leaf first, as a debugger prints a backtrace */
		for (int i = 0; i < n; i++) {
			uint32_t ml;
			const char *m = fr_frame_module_base(&frames[i], &ml);
			if (i)
				fputs(" <- ", out);
			fr_frame_name(&frames[i], true, name, sizeof(name));
			print_safe(out, name, strlen(name));
			if (frames[i].sym && m) {
				fputs(frames[i].module_brackets ? " ([" : " (", out);
				print_safe(out, m, ml);
				fputs(frames[i].module_brackets ? "])" : ")", out);
			}
		}
		if (n <= 0)
			fputs("no frames", out);
		break;
	}
	case FR_REC_SWITCH:
		fprintf(out, "%s -> ", r->sw.prev_state ? "blocks" : "preempted");
		print_safe(out, r->sw.next_comm, r->sw.next_comm_len);
		fprintf(out, "[%u/%u]", r->sw.next_pid, r->sw.next_tid);
		break;
	case FR_REC_BLOCK: {
		char dev[32];
		fprintf(out, "%s %s sector=%" PRIu64 " bytes=%u took %s%s", fr_format_dev(r->block.dev, dev, sizeof(dev)),
			fr_block_op_name(r->block.op), r->block.sector, r->block.bytes,
			fr_format_duration(r->block.duration_ns, buf, sizeof(buf)), r->block.error ? " ERROR" : "");
		break;
	}
	case FR_REC_OOM:
		fputs("OOM-killed, memcg=", out);
		print_safe(out, r->oom.memcg_len ? r->oom.memcg : "?", r->oom.memcg_len ? r->oom.memcg_len : 1);
		fprintf(out, " rss=%" PRIu64 "kB", r->oom.rss_kb);
		break;
	case FR_REC_SIGNAL:
		fprintf(out, "%s from ", fr_signal_name((int)r->signal.sig, buf, sizeof(buf)));
		print_safe(out, r->signal.sender_comm, r->signal.sender_comm_len);
		fprintf(out, "[%u]", r->signal.sender_pid);
		break;
	case FR_REC_TCP: {
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		fprintf(out, "%s %s:%u -> %s:%u %s", fr_tcp_event_name(r->tcp.event),
			fr_format_addr(r->tcp.family, r->tcp.saddr, a, sizeof(a)), r->tcp.sport,
			fr_format_addr(r->tcp.family, r->tcp.daddr, b, sizeof(b)), r->tcp.dport,
			fr_tcp_state_name(r->tcp.state));
		break;
	}
	case FR_REC_MARK:
		fputs("\"", out);
		print_safe(out, r->mark.text, r->mark.text_len);
		fputs("\"", out);
		break;
	case FR_REC_METRICS:
		print_safe(out, r->metrics.json, MIN(r->metrics.json_len, 200u));
		if (r->metrics.json_len > 200)
			fputs("…", out);
		break;
	case FR_REC_TRIGGER:
		fputs("rule ", out);
		print_safe(out, r->trigger.rule, r->trigger.rule_len);
		fputs(" fired -> incident ", out);
		print_safe(out, r->trigger.incident, r->trigger.incident_len);
		break;
	case FR_REC_GAP:
		fprintf(out, "*** %" PRIu64 " records lost on this CPU ***", r->gap.lost);
		break;
	}
	if (e->cgroup && r->type != FR_REC_GAP) {
		fputs(" cgroup=", out);
		print_safe(out, e->cgroup, e->cgroup_len);
	}
	fputc('\n', out);
}
