/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User stacks unwound and named outside the daemon (issue 42): in
 * flightrec-parse, a helper process in the sandbox of parse-sandbox.h,
 * which parses the binaries, debug files and JIT maps of the processes
 * sampled (other users' files, untrusted) with libelf and libdw.  The
 * daemon opens each file for it, as it did for itself (proc-access.h),
 * and only for the process whose stack is being named, or its parent.
 *
 * Each record's stack is one exchange, bounded by a timeout: the daemon
 * waits for the answer (unwound frames and their descriptions) at most
 * sources.sample.parse_timeout (FR_PARSER_TIMEOUT_MS unless set).  A helper
 * that overruns it, crashes, or says
 * something malformed is killed; the file it was parsing then (it says
 * which in a page both map, before libelf or libdw reads a byte of it)
 * is not handed out again for FR_PARSER_QUARANTINE_S, and frames in it
 * are named by their mapping only; another helper starts at the next stack, at
 * most one a second, and after FR_PARSER_FAILS_MAX failures in a minute
 * not for a minute.  Meanwhile user stacks keep their leaf frame and the
 * "[unwind failed]" marker, counted.  The exchanges of one second take at
 * most sources.sample.parse_cpu percent of it (FR_PARSER_CPU_PERCENT unless
 * set; plus the one that
 * passes it): past that, stacks keep their leaf frame until the next
 * second, counted, so that files slow to parse, each short of the
 * deadline, cannot keep the daemon waiting either.  The helper's heap is
 * bounded by sources.sample.parse_memory (FR_PARSER_HEAP_MAX unless set):
 * past it, it drops most of its caches (flightrec-parse.c).  Rare stacks (those of
 * fatal signals, bounded in BPF) have a budget of their own, the same:
 * a busy second of samples does not cost a crash its stack.  Everything is counted
 * (fr_parser_get_stats(), frctl status: sampler.parser).
 */
#ifndef FR_PARSER_H
#define FR_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf-map.h"
#include "symbolizer.h"
#include "unwinder.h"

/* the defaults of sources.sample.parse_timeout and parse_cpu (lib/conf.c) */
#define FR_PARSER_TIMEOUT_MS 500
#define FR_PARSER_CPU_PERCENT 25
#define FR_PARSER_QUARANTINE_S 600
#define FR_PARSER_FAILS_MAX 5

struct fr_parser;

/* Finds the helper (next to the daemon's executable, else where it is
 * installed: FR_LIBEXECDIR) and opens it, to run that very file at
 * every start; it must be root's (or ours) and writable by no one else.
 * The helper itself starts at the first stack. */
int fr_parser_new(struct fr_parser **ret);
struct fr_parser *fr_parser_free(struct fr_parser *p);
/* The longest one exchange may take, the share of each second that
 * exchanges may take in all, and the bound of the helper's heap
 * (sources.sample.parse_timeout, parse_cpu, parse_memory; the last is
 * sent with every trim, once a second). */
void fr_parser_set_limits(struct fr_parser *p, uint64_t timeout_ns, unsigned cpu_percent, uint64_t heap_max);
/* @fn is called with each helper's pid as it starts (before its first
 * instruction of its own), and with 0 when a failed one was stopped. */
void fr_parser_on_start(struct fr_parser *p, void (*fn)(void *userdata, pid_t pid), void *userdata);
/* The helper's path, for messages. */
const char *fr_parser_path(const struct fr_parser *p);

/* What the helper must know of processes: @pid exec'd, exited, forked
 * @child.  Sent with the next exchange. */
void fr_parser_exec(struct fr_parser *p, uint32_t pid);
void fr_parser_exit(struct fr_parser *p, uint32_t pid);
void fr_parser_fork(struct fr_parser *p, uint32_t pid, uint32_t child);

/* The user stack @s: unwound when @s->stack_len, else @nframes given in
 * @frames are taken as they are; then, with @name, described.  Fills
 * out[0..max) (max >= 2) and returns how many; desc[i] (room for @max)
 * describes out[i] (type 0 records where there is nothing to say); its
 * strings stay valid until the next call.  @leaf_user: out[0] is the
 * interrupted instruction (the record has no kernel frames). */
struct fr_ustack;
size_t fr_parser_stack(struct fr_parser *p, const struct fr_ustack *s, const uint64_t *frames, size_t nframes,
		       bool name, bool leaf_user, uint64_t *out, size_t max, struct fr_frame_desc *desc);

/* What the last fr_parser_stack() that named its frames found of the
 * process's executable: a CPython, and which (found 0: not, or not
 * known). */
struct fr_py_probe;
void fr_parser_python(const struct fr_parser *p, struct fr_py_probe *ret);

/* The descriptions fr_parser_stack() gave last stay valid through the
 * next call as well (not the one after): for a record with two stacks
 * (an offcpu record and its waker's). */
void fr_parser_keep(struct fr_parser *p);

/* Between drains: the helper trims its caches and reports its counters. */
void fr_parser_tick(struct fr_parser *p);

struct fr_parser_stats {
	pid_t pid;            /* the helper running now, 0: none */
	uint64_t starts;      /* helpers started */
	uint64_t crashes;     /* died during an exchange (a signal, or exited) */
	uint64_t timeouts;    /* killed for overrunning the deadline */
	uint64_t bad_replies; /* killed for a malformed or unexpected message */
	uint64_t start_failed;/* did not start, or did not say hello in time */
	uint64_t stacks;      /* stacks it answered */
	uint64_t skipped;     /* stacks not sent: no helper (starting again later) */
	uint64_t over_budget; /* stacks not sent: this second's parse_cpu spent */
	uint64_t files_handed;/* files opened for it */
	uint64_t needs_refused; /* asked for a process other than the stack's or its parent's */
	uint64_t quarantined; /* files put in quarantine */
	uint64_t quarantine_refused; /* files not handed out: in quarantine */
	uint64_t descs_cut;   /* frames left unnamed: their names did not fit one message */
	uint64_t wait_ns_max; /* the longest exchange */
	uint64_t heap_bytes;  /* the running helper's heap at its last trim (parse_memory bounds it) */
};
/* The helper's counters (since the daemon started, over all helpers;
 * the gauges are the running one's) into @sym, @unw and @jit. */
void fr_parser_get_stats(const struct fr_parser *p, struct fr_parser_stats *ret, struct fr_symbolizer_stats *sym,
			 struct fr_unwinder_stats *unw, struct fr_perf_maps_stats *jit);

#endif
