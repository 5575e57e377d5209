/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flightrec-parse: flightrecd's parser of other users' binaries.  It
 * unwinds user stacks (unwinder.h) and names their frames (the user half
 * of symbolizer.h), with libelf and libdw, on files flightrecd opens for
 * it (proc-access-broker.c), inside the sandbox of parse-sandbox.h.  A
 * file that crashes it, or keeps it busy past its deadline, costs the
 * names of a moment: flightrecd kills it, starts another, and does not
 * hand that file out again for a while (parser.h).
 *
 * Started by flightrecd only: its socket is descriptor 3, argv[1] the
 * daemon's pid (if that is no longer the parent, it leaves).
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/chunk.h"
#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/store-format.h"
#include "heap.h"
#include "parse-sandbox.h"
#include "parser-proto.h"
#include "proc-access.h"
#include "sanitized.h"

/* The largest message the socket takes (a datagram must fit its send
 * buffer), and at most FR_PARSE_MSG_MAX. */
static size_t reply_max = FR_PARSE_MSG_MAX;

struct helper {
	struct fr_symbolizer *sym;
	struct fr_unwinder *unw;
	uint64_t heap_max;        /* sources.sample.parse_memory (fr_pm_trim) */
	uint64_t heap_checked_at; /* CLOCK_MONOTONIC */
	uint8_t *in, *out;
	uint64_t frames[FR_SAMPLE_FRAMES_MAX];
};

static void send_or_leave(const void *buf, size_t len)
{
	if (send(FR_PARSE_FD, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		_exit(3);
}

static void on_notes(struct helper *h, const uint8_t *buf, size_t len)
{
	const struct fr_pm_notes *m = (const void *)buf;

	if (len < sizeof(*m) || m->n > FR_PM_NOTES_MAX || len != sizeof(*m) + m->n * sizeof(m->note[0]))
		_exit(4);
	for (uint32_t i = 0; i < m->n; i++) {
		const struct fr_pm_note *n = &m->note[i];

		switch (n->kind) {
		case FR_NOTE_EXEC:
			fr_symbolizer_forget(h->sym, n->pid);
			fr_unwinder_forget(h->unw, n->pid);
			break;
		case FR_NOTE_EXIT:
			fr_unwinder_exited(h->unw, n->pid);
			break;
		case FR_NOTE_FORK:
			fr_symbolizer_fork(h->sym, n->pid, n->child);
			fr_unwinder_fork(h->unw, n->pid, n->child);
			break;
		}
	}
}

/* Appends @d's records to out[*len..], after a mask byte; false when
 * they do not fit (nothing appended). */
static bool put_desc(uint8_t *out, size_t *len, const struct fr_frame_desc *d)
{
	const struct fr_record *recs[] = { &d->mapping, &d->symbol, &d->inl };
	size_t at = *len, l = at + 1;
	uint8_t mask = 0;

	if (l > reply_max)
		return false;
	for (unsigned i = 0; i < ELEMENTSOF(recs); i++) {
		struct fr_codec_state st = { .incompat_flags = FR_CHUNK_INCOMPAT_WRITE };
		int r;

		if (!recs[i]->type)
			continue;
		r = fr_record_encode(&st, recs[i], out, reply_max, l);
		if (r < 0)
			return false;
		l = (size_t)r;
		mask |= (uint8_t)(1u << i);
	}
	out[at] = mask;
	*len = l;
	return true;
}

/* The bound of the helper's heap, which holds libdw's per-process unwind
 * tables besides the symbolizer's caches (bounded by their own sizes).
 * Looked at once a second (at each trim) and before the stack of a
 * process the unwinder does not hold yet, at most every @every_ns (glibc's
 * count walks every free list: 17 % of the daemon's CPU when it was asked
 * at every drain); what one stack grows it by is not bounded here (a
 * clang process's first took 5.4 MiB until lib/elf-eh-frame.c).  Over it,
 * the unwinder keeps the most recently sampled quarter of its processes.
 * 32 MiB let a compile loop take the daemon's memory cgroup to 95 MiB at
 * its peak; 16 MiB, 81 MiB, with as many stacks unwound whole (93 %) for
 * 4 % more CPU (tests/bench/memory.sh WORKLOAD=compile, BENCHMARKS.md,
 * issue 48).  Shedding the symbolizer's tables too cost the compile loop
 * 6 % more CPU and lowered no peak, so they keep their own bounds. */
#define HEAP_CHECK_NS 1000000000ULL
#define HEAP_CHECK_NEW_NS 50000000ULL

static void heap_bound(struct helper *h, uint64_t every_ns)
{
	uint64_t now = fr_now_ns(CLOCK_MONOTONIC);

	if (now - h->heap_checked_at < every_ns)
		return;
	h->heap_checked_at = now;
	if (fr_heap_in_use() <= h->heap_max)
		return;
	fr_unwinder_shed(h->unw);
	(void)malloc_trim(0); /* back to the system, not only to malloc */
}

static void on_stack(struct helper *h, const uint8_t *buf, size_t len)
{
	const struct fr_pm_stack *q = (const void *)buf;
	struct fr_pm_frames *a = (void *)h->out;
	size_t n, max, at;

	if (len < sizeof(*q) || q->stack_len > FR_USTACK_COPY || q->nframes > FR_SAMPLE_FRAMES_MAX ||
	    len != sizeof(*q) + q->stack_len + q->nframes * sizeof(uint64_t))
		_exit(4);
	max = MIN((size_t)q->max, ELEMENTSOF(h->frames));
	if (q->flags & FR_PM_UNWIND) {
		struct fr_ustack s = { .pid = q->pid, .tid = q->tid, .ppid = q->ppid, .exe_ino = q->exe_ino,
				       .regs = q->regs, .stack = buf + sizeof(*q), .stack_len = q->stack_len };

		if (!fr_unwinder_has(h->unw, q->pid))
			heap_bound(h, HEAP_CHECK_NEW_NS);
		n = max >= 2 ? fr_unwinder_unwind(h->unw, &s, h->frames, max) : 0;
	} else {
		n = MIN((size_t)q->nframes, max);
		memcpy(h->frames, buf + sizeof(*q), n * sizeof(uint64_t));
	}
	*a = (struct fr_pm_frames){ .type = FR_PM_FRAMES, .nframes = (uint32_t)n };
	memcpy(h->out + sizeof(*a), h->frames, n * sizeof(uint64_t));
	at = sizeof(*a) + n * sizeof(uint64_t);
	if (q->flags & FR_PM_NAME) {
		uint64_t exe_ino;
		const char *maps = (q->flags & FR_PM_UNWIND) && max >= 2 ?
					   fr_unwinder_maps_read(h->unw, q->pid, &exe_ino) :
					   NULL;

		/* named with the mappings just unwound with, not a second read
		 * that may find the process gone (a crash's sender that exits
		 * right after its kill) */
		if (maps)
			fr_symbolizer_take_maps(h->sym, q->pid, exe_ino, maps);
		fr_symbolizer_parent(h->sym, q->pid, q->ppid, q->exe_ino);
		for (size_t i = 0; i < n; i++) {
			struct fr_frame_desc d = {};

			if (h->frames[i] >= FR_FRAME_MARKER_MAX)
				fr_symbolizer_user(h->sym, q->pid, q->exe_ino, h->frames[i],
						   (q->flags & FR_PM_LEAF_USER) && i == 0, &d);
			if (!put_desc(h->out, &at, &d)) {
				a->cut = (uint32_t)(n - i);
				break;
			}
			a->ndesc++;
		}
		fr_symbolizer_python(h->sym, q->pid, q->exe_ino, &a->py);
	}
	send_or_leave(h->out, at);
}

static void on_trim(struct helper *h, const uint8_t *buf, size_t len)
{
	const struct fr_pm_trim *q = (const void *)buf;
	struct fr_pm_stats *s = (void *)h->out;

	if (len != sizeof(*q))
		_exit(4);
	h->heap_max = q->heap_max;
	fr_symbolizer_trim(h->sym);
	fr_unwinder_trim(h->unw);
	heap_bound(h, HEAP_CHECK_NS);
	*s = (struct fr_pm_stats){ .type = FR_PM_STATS, .heap = fr_heap_in_use() };
	fr_symbolizer_get_stats(h->sym, &s->sym);
	fr_unwinder_get_stats(h->unw, &s->unw);
	fr_symbolizer_get_jit_stats(h->sym, &s->jit);
	send_or_leave(s, sizeof(*s));
}

#ifdef FR_SANITIZED
/* Its environment is empty (parser.c): a finding aborts it, reported on
 * the daemon's stderr, and the sanitized daemon then aborts too. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "abort_on_error=1:detect_leaks=0:handle_segv=0";
}
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}
#endif

int main(int argc, char **argv)
{
	struct fr_pm_hello hello = { .type = FR_PM_HELLO, .proto = FR_PARSE_PROTO };
	struct helper h = { .heap_max = FR_PARSER_HEAP_MAX };
	const char *what;
	int r;

	/* gone with the daemon; and only ever its child */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || argc != 2 || getppid() != (pid_t)atol(argv[1])) {
		fprintf(stderr, "<3>flightrec-parse is started by flightrecd only.\n");
		return 2;
	}
	h.in = malloc(FR_PARSE_MSG_MAX);
	h.out = malloc(FR_PARSE_MSG_MAX);
	if (!h.in || !h.out || fr_symbolizer_new(NULL, &h.sym) < 0 || fr_unwinder_new(&h.unw) < 0) {
		fprintf(stderr, "<3>flightrec-parse: out of memory.\n");
		return 1;
	}
	{
		int sndbuf = 0;
		socklen_t len = sizeof(sndbuf);
		/* the kernel refuses a datagram over sk_sndbuf - 32 */
		if (getsockopt(FR_PARSE_FD, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) == 0 && sndbuf > 4096)
			reply_max = MIN(reply_max, (size_t)sndbuf - 1024);
	}
	r = fr_access_broker_init();
	if (r < 0) {
		fprintf(stderr, "<3>flightrec-parse: failed to map its page for flightrecd: %s\n", strerror(-r));
		return 1;
	}
	r = fr_parse_sandbox_enter(&what);
	if (r < 0) {
		fprintf(stderr, "<3>flightrec-parse: failed to enter its sandbox (%s): %s\n", what, strerror(-r));
		return 1;
	}
	send_or_leave(&hello, sizeof(hello));
	for (;;) {
		ssize_t n = recv(FR_PARSE_FD, h.in, FR_PARSE_MSG_MAX, 0);
		uint32_t type;

		if (n <= 0)
			_exit(0); /* the daemon closed it: no atexit work, no leak scan */
		if ((size_t)n < sizeof(type))
			_exit(4);
		memcpy(&type, h.in, sizeof(type));
		switch (type) {
		case FR_PM_NOTES:
			on_notes(&h, h.in, (size_t)n);
			break;
		case FR_PM_STACK:
			on_stack(&h, h.in, (size_t)n);
			break;
		case FR_PM_TRIM:
			on_trim(&h, h.in, (size_t)n);
			break;
		default:
			_exit(4);
		}
	}
}
