/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frctl report: one screen about a window or an incident, for the person
 * who has to say what happened: what fired and on which record, the
 * slowest calls, waits (off-CPU ones with their stacks) and I/O, where
 * the blocked time and the CPU went, which processes came, went or were
 * killed, the extremes of the metrics, and what is missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/crash-line.h"
#include "../lib/macro.h"
#include "../lib/parse.h"
#include "../lib/record-fields.h"
#include "../lib/symtab.h"
#include "../lib/syscall-names.h"
#include "../lib/waker.h"
#include "../lib/out-buf.h"
#include "coredump-link.h"
#include "frctl-error.h"
#include "frctl.h"
#include "options.h"
#include "output-file.h"
#include "output-text.h"
#include "report-baseline.h"
#include "report.h"
#include "source-host.h"
#include "string-counts.h"
#include "what-changed.h"
#include "window-args.h"

/* Prints the @max most counted of @c (and ends it) as shares of @total. */
static void print_counts(struct fr_counts *c, uint64_t total, unsigned max, const char *indent)
{
	size_t k = fr_counts_sort(c, true);

	for (size_t i = 0; i < k && i < max; i++)
		printf("%s%5.1f%%  %s\n", indent, total ? 100.0 * (double)c->v[i].n / (double)total : 0.0, c->v[i].key);
	fr_counts_done(c);
}

/* the width a path's line is shortened to: one line in a terminal */
#define PATH_COLUMNS 100
/* lines of "What changed" in the text */
#define CHANGES_MAX 12

/* One entry on one line: the text format without the date. */
static void print_entry(struct fr_window *w, const struct fr_window_entry *e, const char *indent)
{
	/* a signal's stack is in the section on them */
	struct fr_text *t = fr_text_new(FR_TEXT_NO_DATE | FR_TEXT_ONE_LINE);
	struct fr_out o;

	if (!t || fr_out_init(&o, stdout) < 0) {
		fr_text_free(t);
		return;
	}
	fr_out_puts(&o, indent);
	fr_text_print(t, &o, w, e);
	(void)fr_out_end(&o); /* stdout's errors are seen at its end */
	fr_text_free(t);
}

/* Text from a file, printed without its control bytes (\xNN instead): a
 * crafted file must not drive the terminal. */
static void print_safe(const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f || c == '\\')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void print_header(const struct frctl_source *s, const struct report *rp)
{
	struct json_object *v;
	char a[64], b[64], d[32];

	const char *host, *kernel;

	printf("Source: %s%s\n", s->is_file ? "" : "store ", s->name);
	/* the machine that recorded the window, whoever reads it */
	frctl_hosts_window(s->hosts, s->w, &host, &kernel);
	if (host || kernel) {
		fputs("Host: ", stdout);
		print_safe(host ? host : "?");
		fputs(", kernel ", stdout);
		print_safe(kernel ? kernel : "?");
		putchar('\n');
	}
	if (s->meta) {
		const char *reason = frctl_meta_string(s->meta, "reason");
		if (json_object_object_get_ex(s->meta, "rules", &v)) {
			printf("Incident: rules %s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
			if (reason) {
				fputs(", reason \"", stdout);
				print_safe(reason);
				putchar('"');
			}
			putchar('\n');
		}
	}
	if (rp->records) {
		fr_format_rfc3339(rp->first, a, sizeof(a));
		fr_format_rfc3339(rp->last, b, sizeof(b));
		printf("Window: %s to %s (%s), %" PRIu64 " records\n", a, b,
		       fr_format_duration(rp->last - rp->first, d, sizeof(d)), rp->records);
	} else
		printf("Window: no records\n");
}

static void print_list(struct fr_window *w, const char *title, const struct list *l, unsigned max,
		       const char *indent)
{
	if (!l->n)
		return;
	printf("%s (%" PRIu64 "):\n", title, l->n + l->more);
	for (unsigned i = 0; i < l->n && i < max; i++)
		print_entry(w, &l->v[i], indent);
}

static void print_fired(struct fr_window *w, const struct frctl_source *s, const struct report *rp)
{
	struct json_object *trig;

	if (json_object_object_get_ex(s->meta, "triggers", &trig) && json_object_is_type(trig, json_type_array) &&
	    json_object_array_length(trig)) {
		printf("What fired (%zu triggering records):\n", json_object_array_length(trig));
		for (size_t i = 0; i < json_object_array_length(trig) && i < TOP; i++)
			printf("  %s\n", json_object_to_json_string_ext(json_object_array_get_idx(trig, i),
									 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	print_list(w, "Marks", &rp->marks, TOP, "  ");
	if (!rp->triggers.n)
		return;
	printf("Triggers in the window (%u%s):\n", rp->triggers.n, rp->triggers.more ? " and more" : "");
	for (unsigned i = 0; i < rp->triggers.n; i++) {
		print_entry(w, &rp->triggers.v[i], "  ");
		if (rp->has_cause[i])
			print_entry(w, &rp->causes[i], "    fired on: ");
	}
}

/* Where it crashed, first: each fatal signal in one line (lib/crash-line.h), the first CRASH_STACKS
 * with their whole stack under it (a debugger's backtrace), and the core dump systemd-coredump kept. */
#define CRASH_STACKS 3
static void print_crashes(struct fr_window *w, const struct report *rp)
{
	struct fr_frame f[FRAMES_MAX];
	struct frctl_coredumps journal = {};
	struct frctl_coredump cd;
	char line[1024], name[512];
	uint32_t ml;

	if (!rp->signals.n)
		return;
	printf("Fatal signals (%" PRIu64 "), where they were raised:\n", rp->signals.n + rp->signals.more);
	for (unsigned i = 0; i < rp->signals.n; i++) {
		const struct fr_window_entry *e = &rp->signals.v[i];
		int n = fr_window_frames(w, e, f, FRAMES_MAX);
		const char *m;

		fputs("  ", stdout);
		print_safe(fr_crash_line(&e->r, f, MAX(n, 0), 6, line, sizeof(line)));
		putchar('\n');
		if (i < CRASH_STACKS) {
			for (int j = fr_crash_first_frame(&e->r, n); j < n; j++) {
				printf("    #%-2d ", j - fr_crash_first_frame(&e->r, n));
				print_safe(fr_frame_name(&f[j], true, name, sizeof(name)));
				if (f[j].inlined)
					fputs(" (inlined)", stdout);
				else if (f[j].sym && (m = fr_frame_module_base(&f[j], &ml))) {
					snprintf(line, sizeof(line), " (%.*s)", (int)ml, m);
					print_safe(line);
				}
				putchar('\n');
			}
			if (e->r.signal.stack == FR_SIGNAL_STACK_OVER)
				printf("    [stack not taken: over the budget of stacks a second]\n");
		}
		/* (its file name has the process's name in it: printed safe) */
		if (frctl_coredump_find(&journal, w, e, &cd)) {
			snprintf(line, sizeof(line), "    core dump kept by systemd-coredump%s%s; open it with: %s",
				 cd.storage[0] ? " in " : "", cd.storage, cd.command);
			print_safe(line);
			putchar('\n');
		}
	}
	frctl_coredumps_done(&journal);
}

static void print_processes(struct fr_window *w, struct report *rp)
{
	printf("Processes: %" PRIu64 " started (exec), %" PRIu64 " forks, %" PRIu64 " exited (%" PRIu64 " non-zero)\n",
	       rp->execs, rp->forks, rp->exits, rp->exits_failed);
	if (rp->execs) {
		printf("  most started:\n");
		print_counts(&rp->started, rp->execs, 3, "    ");
	}
	print_list(w, "  killed by a signal", &rp->killed, TOP, "    ");
	print_list(w, "  OOM kills", &rp->ooms, TOP, "    ");
}

static void print_extreme(const char *what, const struct extreme *x, int decimals, double scale, const char *unit)
{
	char t[64];

	if (!x->seen)
		return;
	fr_format_rfc3339(x->wall, t, sizeof(t));
	printf("  %-28s %8.*f %-4s at %s\n", what, decimals, x->v * scale, unit, t);
}

static void print_metrics(const struct report *rp)
{
	if (!rp->load.seen && !rp->mem.seen)
		return;
	printf("Metric extremes:\n");
	print_extreme("highest CPU busy (one CPU)", &rp->busy, 0, 1, "%");
	print_extreme("highest load (1 min)", &rp->load, 2, 1, "");
	print_extreme("least memory available", &rp->mem, 0, 1.0 / 1024, "MiB");
	print_extreme("highest CPU pressure (some)", &rp->psi_cpu, 2, 1, "%");
	print_extreme("highest memory pressure", &rp->psi_mem, 2, 1, "%");
	print_extreme("highest I/O pressure", &rp->psi_io, 2, 1, "%");
}

/* Prints what fits of the frame name @p in @max columns (bytes: a name's
 * UTF-8 is never narrower), cut with "…" when it does not fit. */
static void print_cut(const char *p, size_t max)
{
	size_t len = strlen(p);
	char buf[512];

	if (len <= max) {
		print_safe(p);
		return;
	}
	len = max > 1 ? max - 1 : 0;
	while (len > 0 && ((unsigned char)p[len] & 0xc0) == 0x80) /* not inside a UTF-8 character */
		len--;
	snprintf(buf, sizeof(buf), "%.*s", (int)len, p);
	print_safe(buf);
	fputs("…", stdout);
}

/* How many of the frames f[0..n) (leaf first) fit in @avail columns from
 * the innermost out, with room for "… → " (4 columns) unless the last is
 * the outermost; " → " is 3.  *cols: the columns print_frames() takes for
 * them, all of @avail when not even the innermost fits (it is cut). */
static int frames_fit(const struct fr_frame *f, int n, size_t avail, size_t *cols)
{
	char name[512];
	size_t used = 0;
	int k = 0;

	for (; k < n; k++) {
		size_t len = strlen(fr_frame_name(&f[k], false, name, sizeof(name))) + (k ? 3 : 0);
		if (used + len + (k + 1 < n ? 4 : 0) > avail)
			break;
		used += len;
	}
	*cols = k == n ? used : k ? used + 4 : avail;
	return k;
}

/* The innermost @k of the frames f[0..n), outermost first, after "… → "
 * when that leaves some out; @k 0: the innermost, cut to @avail. */
static void print_frames(const struct fr_frame *f, int n, int k, size_t avail)
{
	char name[512];

	if (k < n && n > 1)
		fputs("… → ", stdout);
	if (!k) /* not even the innermost fits */
		print_cut(fr_frame_name(&f[0], false, name, sizeof(name)), avail - (n > 1 ? 4 : 0));
	for (int j = k - 1; j >= 0; j--) {
		print_safe(fr_frame_name(&f[j], false, name, sizeof(name)));
		if (j)
			fputs(" → ", stdout);
	}
}

/* The rest of the line: the frames f[0..n) of @e in @avail columns,
 * outermost first: the innermost that fit, after "…" when the outer ones
 * do not (the folded output has them all).  An off-CPU wait's user frames
 * say who waited, its kernel frames on what: the innermost of each part
 * are shown (main → wait_for_input → __libc_read → … → vfs_read →
 * anon_pipe_read); those between, where the call entered the kernel, say
 * little.  User space's take two thirds of the room, or what the kernel's
 * all leave, less what the kernel's innermost needs; the kernel's the
 * rest. */
static void print_stack(const struct fr_window_entry *e, const struct fr_frame *f, int n, size_t avail)
{
	int nk = MIN((int)e->r.stack.kernel_frames, n);
	char name[512];
	size_t kc, kmin, uc, ua;

	if (n <= 0)
		fputs("[no stack]", stdout);
	else if (e->r.type != FR_REC_OFFCPU || nk == 0 || nk == n)
		print_frames(f, n, frames_fit(f, n, avail, &kc), avail);
	else {
		(void)frames_fit(f, nk, SIZE_MAX, &kc);
		kmin = strlen(fr_frame_name(&f[0], false, name, sizeof(name))) + (nk > 1 ? 4 : 0);
		ua = MAX(avail * 2 / 3, avail > kc + 3 ? avail - kc - 3 : 0);
		ua = MIN(ua, avail > kmin + 3 + avail / 3 ? avail - kmin - 3 : avail / 3);
		print_frames(f + nk, n - nk, frames_fit(f + nk, n - nk, ua, &uc), ua);
		fputs(" → ", stdout);
		print_frames(f, nk, frames_fit(f, nk, avail - uc - 3, &kc), avail - uc - 3);
	}
	putchar('\n');
}

/* Who ended off-CPU wait @e, and, when that was a thread that had been
 * waiting itself, on whom, and so on: one line each, its stack fitted.
 *            ← woken by fr-front[11] (tid 11): main → reply → write → … → anon_pipe_write
 *            ← which waited 1.50 s in read, woken by fr-back[12] (tid 12): …
 *            ← which waited 1.50 s in clock_nanosleep, woken by [timer] */
static void print_waker_chain(struct fr_window *w, struct fr_waits *waits, const struct fr_window_entry *e)
{
	struct fr_window_entry cur = *e, next, view;
	struct fr_frame f[FRAMES_MAX];
	char label[128], d[32];
	unsigned depth = 0;

	for (; cur.r.type == FR_REC_OFFCPU && cur.r.sched.waker.context; depth++) {
		const struct fr_record_waker *k = &cur.r.sched.waker;
		int n = fr_window_waker_frames(w, &cur, f, FRAMES_MAX), col;
		bool thread = fr_waker_is_thread(k, n > 0 ? f : NULL, n);

		if (depth == FR_WAIT_CHAIN_MAX) {
			printf("             ← … (longer: cut at %d)\n", FR_WAIT_CHAIN_MAX);
			return;
		}
		fr_waker_label(k, n > 0 ? f : NULL, n, label, sizeof(label));
		col = printf("             ← ");
		if (depth) {
			const char *call = cur.r.sched.syscall_nr >= 0 ? fr_syscall_name((unsigned)cur.r.sched.syscall_nr)
								     : NULL;
			col += printf("which waited %s%s%s, ", fr_format_duration(cur.r.sched.duration_ns, d, sizeof(d)),
				      call ? " in " : "", call ? call : "");
		}
		col += printf("woken by ");
		print_safe(label);
		col += (int)strlen(label);
		if (thread) {
			col += printf("[%" PRIu32 "]", k->pid);
			if (k->tid != k->pid)
				col += printf(" (tid %" PRIu32 ")", k->tid);
		}
		/* a thread's: from where it woke it (an interrupt's label
		 * says what it was) */
		if (thread && n > 0 && !k->no_stack) {
			int skip = MIN(fr_waker_machinery(f, n), (int)k->stack.kernel_frames);

			fr_record_waker_view(&cur.r, &view.r);
			view.r.stack.kernel_frames = (uint16_t)(view.r.stack.kernel_frames - skip);
			col += printf(": ");
			print_stack(&view, f + skip, n - skip, col < PATH_COLUMNS - 16 ? (size_t)(PATH_COLUMNS - col) : 16);
		} else
			putchar('\n');
		if (!thread || !fr_waits_waker_wait(waits, w, &cur, &next))
			return;
		cur = next;
	}
}

/* Each entry that has a stack (an off-CPU wait) is followed by it, under
 * the entry's text, after how many frames it has; an off-CPU wait then
 * by who ended it (@waits: NULL, not followed). */
static void print_top(struct fr_window *w, const char *title, const struct top *t, struct fr_waits *waits)
{
	struct fr_frame f[FRAMES_MAX];
	char d[32];
	int n;

	if (!t->count)
		return;
	printf("%s (%" PRIu64 " recorded, over their thresholds):\n", title, t->count);
	for (unsigned i = 0; i < t->n; i++) {
		printf("  %9s  ", fr_format_duration(t->v[i], d, sizeof(d)));
		print_entry(w, &t->e[i], "");
		if (!fr_record_type_has_stack(t->e[i].r.type))
			continue;
		n = fr_window_frames(w, &t->e[i], f, FRAMES_MAX);
		if (n > 0)
			snprintf(d, sizeof(d), "%d frame%s", n, n == 1 ? "" : "s");
		else
			d[0] = 0;
		printf("  %9s  ", d);
		print_stack(&t->e[i], f, n, PATH_COLUMNS - 13);
		if (waits)
			print_waker_chain(w, waits, &t->e[i]);
	}
}

/* A path's weight as printed: samples, or time blocked. */
static const char *format_weight(const struct paths *p, uint64_t v, char *buf, size_t len)
{
	if (p->time)
		return fr_format_duration(v, buf, len);
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* One path on one line: its share of @total, its weight, the process,
 * then its frames in what is left of PATH_COLUMNS. */
static void print_path(struct fr_window *w, const struct paths *p, const struct path *pa, uint64_t total,
		       int width)
{
	struct fr_window_entry e;
	struct fr_frame f[FRAMES_MAX];
	char v[32];
	int col;

	if (fr_window_get(w, pa->item, &e) < 0)
		return;
	col = printf("    %5.1f%%  %*s  ", total ? 100.0 * (double)pa->weight / (double)total : 0.0, width,
		     format_weight(p, pa->weight, v, sizeof(v)));
	print_safe(e.r.comm);
	fputs(": ", stdout);
	col += (int)strlen(e.r.comm) + 2;
	print_stack(&e, f, fr_window_frames(w, &e, f, FRAMES_MAX),
		    col < PATH_COLUMNS - 16 ? (size_t)(PATH_COLUMNS - col) : 16);
}

/* The TOP paths of most weight (ties: the first seen), as shares of
 * @total, under "@title (share, samples or time, ...):". */
static void print_paths(struct fr_window *w, const struct paths *p, const char *title, uint64_t total)
{
	const struct path *top[TOP];
	uint64_t held = 0, err = 0;
	unsigned nt = 0;
	char v[32];
	int width = 1;

	if (p->failed) {
		printf("  %s: not counted, out of memory\n", title);
		return;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct path *x = &p->v[i];
		unsigned j;

		held += x->weight;
		if (nt == TOP && (x->weight < top[TOP - 1]->weight ||
				  (x->weight == top[TOP - 1]->weight && x->item > top[TOP - 1]->item)))
			continue;
		j = nt < TOP ? nt++ : TOP - 1;
		for (; j > 0 && (top[j - 1]->weight < x->weight ||
				 (top[j - 1]->weight == x->weight && top[j - 1]->item > x->item)); j--)
			top[j] = top[j - 1];
		top[j] = x;
	}
	printf("  %s (share, %s, process: outermost → innermost):\n", title, p->time ? "time" : "samples");
	for (unsigned i = 0; i < nt; i++)
		width = MAX(width, (int)strlen(format_weight(p, top[i]->weight, v, sizeof(v))));
	for (unsigned i = 0; i < nt; i++) {
		print_path(w, p, top[i], total, width);
		err = MAX(err, top[i]->err);
	}
	if (!p->pruned)
		return;
	printf("    (over %u distinct paths: %s%s on rare ones not counted, ", PATHS_MAX,
	       format_weight(p, p->total - held, v, sizeof(v)), p->time ? "" : " samples");
	if (err)
		printf("up to %s of each above)\n", format_weight(p, err, v, sizeof(v)));
	else
		printf("none of those above)\n");
}

/* The longest off-CPU waits with their stacks, then the blocked time by
 * call path, as shares of all of it: the waits without a stack apart. */
static void print_offcpu(struct fr_window *w, struct report *rp)
{
	static const char title[] = "off-CPU time by call path";
	char d[32];

	if (rp->offcpu_idle)
		printf("Off-CPU waits idle by design, not listed: %" PRIu64 " (%s: kernel threads' idle loops, "
		       "epoll_wait, poll, futex, sleeps; frctl dump has them)\n",
		       rp->offcpu_idle, fr_format_duration(rp->offcpu_idle_ns, d, sizeof(d)));
	if (!rp->offcpu.count)
		return;
	print_top(w, "Longest off-CPU (blocked)", &rp->offcpu, &rp->waits);
	if (rp->offcpu_bare == rp->offcpu.count) {
		printf("  %s: none, no wait had a stack\n", title);
		return;
	}
	print_paths(w, &rp->offcpu_paths, title, rp->offcpu_ns);
	if (rp->offcpu_bare)
		printf("    (%" PRIu64 " wait%s without a stack: %s, %.1f%%)\n", rp->offcpu_bare,
		       rp->offcpu_bare == 1 ? "" : "s", fr_format_duration(rp->offcpu_bare_ns, d, sizeof(d)),
		       rp->offcpu_ns ? 100.0 * (double)rp->offcpu_bare_ns / (double)rp->offcpu_ns : 0.0);
}

/* --format json: the comparison, for tools (frctl(1), "What changed"). */
static void print_json(const struct frctl_source *s, const struct baseline *bl, struct json_object *changes)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "source", json_object_new_string(s->name));
	json_object_object_add(o, "window", bl->active ? side_span_json(&bl->now) : NULL);
	json_object_object_add(o, "baseline", bl->active ? side_span_json(&bl->base) : NULL);
	json_object_object_add(o, "changes", changes ? json_object_get(changes) : json_object_new_array());
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void help(void)
{
	printf("Usage: frctl report [--last DUR | --incident ID | --input FILE] [OPTIONS]\n"
	       "\n"
	       "One screen about a window or an incident: where it crashed, what\n"
	       "changed against the minutes before, what fired and on which record,\n"
	       "marks, the slowest syscalls, off-CPU waits (with their stacks),\n"
	       "run-queue waits and block I/O, where the off-CPU time went (by call\n"
	       "path), where the CPU went (from the samples: by process, function and\n"
	       "call path), processes started, exited and killed, the extremes of the\n"
	       "metrics, and records lost.\n"
	       "\n"
	       "      --format FMT     text (default); html: one self-contained page\n"
	       "                       for a browser, offline (attach it to the ticket):\n"
	       "                       a timeline of the processes involved, CPU and\n"
	       "                       off-CPU flame graphs, the metrics, and the tables;\n"
	       "                       json: what changed, for tools\n"
	       "  -o, --output FILE    write to FILE (complete, or not at all) instead\n"
	       "                       of standard output\n"
	       "\n"
	       "What changed: the window against a baseline, by default the same length\n"
	       "just before it (an incident: the store's minutes before it, else its\n"
	       "own part before its trigger), each change ranked by how unusual it is.\n"
	       "      --baseline-since TIME, --baseline-until TIME\n"
	       "                       compare with this span of the store instead\n"
	       "      --baseline-incident ID\n"
	       "                       compare with another incident of the store\n"
	       "      --no-baseline    compare with nothing\n"
	       "\n"
	       "%s"
	       "\n"
	       "Exit status: 0 done, 1 the source could not be read or is damaged,\n"
	       "2 bad command line.\n",
	       frctl_window_help());
}

int verb_report(struct frctl *f, int argc, char **argv)
{
	enum { O_FORMAT = O_WIN__END };
	static const struct option opts[] = {
		FRCTL_GLOBAL_OPTIONS,
		FRCTL_WINDOW_OPTIONS,
		REPORT_BASELINE_OPTIONS,
		{ "format", required_argument, NULL, O_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct frctl_window_args a;
	struct frctl_source s = {};
	struct report rp = { .offcpu_paths.time = true };
	struct baseline bl = {};
	struct json_object *changes = NULL;
	const char *output = NULL;
	_cleanup_free_ char *tmp = NULL;
	bool html = false, json = false;
	FILE *out = stdout, *real_stdout = stdout;
	int c, k;

	frctl_window_args_init(&a);
	while ((c = getopt_long(argc, argv, "c:s:o:qh", opts, NULL)) >= 0) {
		if (frctl_global_option(f, c, optarg))
			continue;
		k = frctl_window_option(&a, c, optarg);
		if (k < 0)
			return EXIT_USAGE;
		if (k > 0 || baseline_option(&bl, c, optarg))
			continue;
		switch (c) {
		case O_FORMAT:
			if (strcmp(optarg, "html") != 0 && strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
				frctl_error("--format: unknown format \"%s\" (text, html, json)", optarg);
				return EXIT_USAGE;
			}
			html = strcmp(optarg, "html") == 0;
			json = strcmp(optarg, "json") == 0;
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return frctl_bad_option("report", argv);
		}
	}
	if (optind < argc) {
		frctl_error("report: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (html && !output && isatty(STDOUT_FILENO)) {
		frctl_error("--format html writes a page for a browser: give it a file with -o FILE");
		return EXIT_USAGE;
	}
	if (frctl_window_finish(&a) < 0)
		return EXIT_USAGE;
	/* the page names each lane's executable; kernel threads' sleeps
	 * are their idle loops (lib/wait-kind.h) */
	a.need_exe = true;
	bl.stacks = html;
	k = frctl_source_open(f, &a, &s);
	if (k == 0)
		k = baseline_open(f, &bl, &a, &s);
	if (k != 0) {
		baseline_done(&bl);
		frctl_source_done(&s);
		return k;
	}
	for (size_t i = 0; i < s.w->n; i++) {
		struct fr_window_entry e;
		if (!frctl_window_entry(&a, s.w, i, &e))
			continue;
		report_add(&rp, s.w, i, &e);
		baseline_add_window(&bl, s.w, i, &e);
	}
	baseline_add_own(&bl);
	if (bl.active && !(changes = what_changed(&bl.now, &bl.base))) {
		frctl_error("out of memory");
		k = EXIT_FAILURE_;
		goto out;
	}
	if (output && frctl_output_open(output, &tmp, &out) < 0) {
		k = EXIT_FAILURE_;
		goto out;
	}
	if (html) {
		k = report_html(&rp, &s, &a, &bl, changes, out);
		if (k < 0) {
			frctl_error("cannot write the page: %s", strerror(-k));
			k = EXIT_FAILURE_;
			goto out;
		}
		goto done;
	}
	/* the text is printed to stdout: -o points it at the file (glibc's
	 * stdout is a variable, to be assigned; restored below) */
	if (out != stdout) {
		fflush(stdout);
		stdout = out;
	}

	if (json) {
		print_json(&s, &bl, changes);
		goto done;
	}
	print_header(&s, &rp);
	print_crashes(s.w, &rp);
	if (bl.active)
		what_changed_print(changes, &bl.now, &bl.base, CHANGES_MAX);
	print_fired(s.w, &s, &rp);
	print_top(s.w, "Slowest syscalls", &rp.syscall, NULL);
	print_offcpu(s.w, &rp);
	print_top(s.w, "Longest run-queue waits", &rp.runq, NULL);
	print_top(s.w, "Slowest block I/O", &rp.block, NULL);
	if (rp.samples) {
		printf("CPU (%" PRIu64 " samples): by process\n", rp.samples);
		print_counts(&rp.procs, rp.samples, TOP, "  ");
		printf("  by function (where the CPU was):\n");
		print_counts(&rp.self, rp.samples, TOP + 3, "    ");
		print_paths(s.w, &rp.cpu_paths, "hottest call paths", rp.samples);
	}
	print_processes(s.w, &rp);
	print_metrics(&rp);
	if (rp.gaps_lost)
		printf("Gaps: %" PRIu64 " records lost (%" PRIu64 " gap records): the window is incomplete there\n",
		       rp.gaps_lost, rp.gap_records);
	else
		printf("Gaps: none, no record was lost\n");
done:
	if (fflush(out) != 0 || ferror(out)) {
		frctl_error("write error: %s", strerror(errno));
		k = EXIT_FAILURE_;
		goto out;
	}
	k = frctl_source_check(&s);
	/* -o: nothing half-written, nothing from a damaged source */
	if (k == 0 && tmp && frctl_output_commit(out, tmp, output) < 0)
		k = EXIT_FAILURE_;
out:
	if (out != real_stdout) {
		fclose(out);
		stdout = real_stdout;
		if (k != 0 && tmp)
			unlink(tmp);
	}
	report_done(&rp);
	json_object_put(changes);
	baseline_done(&bl);
	frctl_source_done(&s);
	return k;
}
