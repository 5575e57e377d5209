/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../bpf/event.h"
#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "../lib/record.h"
#include "unwinder.h"

/* Processes held, each with its Dwfl: the modules it maps, their open ELF
 * files and the unwind tables looked up so far.  Measured at ~60 KiB and
 * 5-15 open files per process (libc, ld.so, the binary, its libraries). */
#define PROCS_MAX 256
/* A process whose stack reaches code outside every module it had (a
 * library loaded since) has its mappings read again, at most this often. */
#define REREAD_NS 1000000000ULL

struct uproc {
	uint32_t pid;
	uint64_t exe_ino; /* of /proc/PID/exe when the maps were read */
	Dwfl *dwfl;       /* NULL: the process was gone when first sampled */
	uint64_t read_at;
	uint64_t used;
	struct fr_unwinder *u;
};

struct fr_unwinder {
	char *debuginfo_path; /* "-:.debug:DIR": see dwfl_standard_find_debuginfo */
	Dwfl_Callbacks callbacks;
	struct fr_pid_map procs;
	uint64_t clock;
	/* the stack being unwound */
	const struct fr_ustack *cur;
	bool read_past; /* a read beyond the copy was asked for */
	uint64_t *out;
	size_t nout, max;
	struct fr_unwinder_stats st;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	return 0; /* threads are named by the sample, through get_thread */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	*thread_arg = arg;
	return true;
}

/* Reads of the stack come from the copy: the process may be gone. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct fr_unwinder *u = ((struct uproc *)arg)->u;
	const struct fr_ustack *s = u->cur;
	uint64_t sp = s->regs[7];

	if (addr < sp || addr - sp > s->stack_len || s->stack_len - (addr - sp) < sizeof(*result)) {
		u->read_past = true;
		return false;
	}
	memcpy(result, s->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct fr_ustack *s = ((struct uproc *)arg)->u->cur;
	Dwarf_Word regs[FR_UREGS];

	for (unsigned i = 0; i < FR_UREGS; i++)
		regs[i] = s->regs[i];
	return dwfl_thread_state_registers(thread, 0, FR_UREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

int fr_unwinder_new(const char *debug_dir, struct fr_unwinder **ret)
{
	struct fr_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	/* "-": no CRC check of .gnu_debuglink files; ".debug": beside the
	 * binary; then the debug directory, by build id and by path */
	if (asprintf(&u->debuginfo_path, "-:.debug:%s", debug_dir && *debug_dir ? debug_dir : "/usr/lib/debug") < 0) {
		free(u);
		return -ENOMEM;
	}
	u->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &u->debuginfo_path,
	};
	*ret = u;
	return 0;
}

static void uproc_free(struct uproc *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p);
}

struct fr_unwinder *fr_unwinder_free(struct fr_unwinder *u)
{
	struct uproc *p;
	size_t i = 0;

	if (!u)
		return NULL;
	while ((p = fr_pid_map_next(&u->procs, &i, NULL)))
		uproc_free(p);
	fr_pid_map_done(&u->procs);
	free(u->debuginfo_path);
	free(u);
	return NULL;
}

/* (Re)reads @p's mappings into its Dwfl; false if the process is gone. */
static bool report_maps(struct fr_unwinder *u, struct uproc *p)
{
	char path[64];
	struct stat st;

	p->read_at = fr_now_ns(CLOCK_MONOTONIC);
	u->st.maps_read++;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&u->callbacks);
		if (!p->dwfl)
			return false;
	}
	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	p->exe_ino = stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
	dwfl_report_begin(p->dwfl);
	if (dwfl_linux_proc_report(p->dwfl, (pid_t)p->pid) != 0 || dwfl_report_end(p->dwfl, NULL, NULL) != 0) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return false;
	}
	if (dwfl_pid(p->dwfl) < 0 && !dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, p)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return false;
	}
	return true;
}

static struct uproc *uproc_get(struct fr_unwinder *u, uint32_t pid, uint64_t exe_ino)
{
	struct uproc *p = fr_pid_map_get(&u->procs, pid);

	if (p && exe_ino && p->exe_ino != exe_ino && fr_now_ns(CLOCK_MONOTONIC) - p->read_at >= REREAD_NS) {
		/* an exec not seen yet: start over */
		fr_pid_map_remove(&u->procs, pid);
		uproc_free(p);
		p = NULL;
	}
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || fr_pid_map_put(&u->procs, pid, p, NULL) < 0) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->u = u;
	/* a process already gone keeps an entry without a Dwfl: its other
	 * samples are not tried again one by one */
	(void)report_maps(u, p);
	return p;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct fr_unwinder *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (pc < FR_FRAME_MARKER_MAX) /* not code: the chain ended */
		return DWARF_CB_ABORT;
	if (u->nout + 1 >= u->max) { /* one place kept for the marker */
		u->read_past = true;
		return DWARF_CB_ABORT;
	}
	u->out[u->nout++] = pc;
	return DWARF_CB_OK;
}

/* Unwinds with @p's Dwfl; true if it reached the outermost frame. */
static bool walk(struct fr_unwinder *u, struct uproc *p)
{
	int r;

	u->nout = 0;
	u->read_past = false;
	r = dwfl_getthread_frames(p->dwfl, (pid_t)u->cur->tid, on_frame, u);
	/* the end of a chain is an error on some architectures: what counts
	 * is where it ended (libdwfl.h) */
	return (r == 0 && !u->read_past) || (r == -1 && u->nout > 0 && !u->read_past && dwfl_addrmodule(p->dwfl, u->out[u->nout - 1]) &&
			  dwfl_errno() == 0);
}

size_t fr_unwinder_unwind(struct fr_unwinder *u, const struct fr_ustack *s, uint64_t *out, size_t max)
{
	struct uproc *p;
	bool done;

	if (max < 2 || !s->regs[7] || !s->regs[16])
		return 0;
	u->st.stacks++;
	p = uproc_get(u, s->pid, s->exe_ino);
	if (p)
		p->used = ++u->clock;
	if (!p || !p->dwfl || (s->exe_ino && p->exe_ino != s->exe_ino)) {
		/* gone before its maps were read, or sampled in another image */
		out[0] = s->regs[16];
		out[1] = FR_FRAME_UNWIND_FAILED;
		u->st.failed++;
		return 2;
	}
	u->cur = s;
	u->out = out;
	u->max = max;
	done = walk(u, p);
	/* stopped in code outside every module known: a library loaded
	 * since the maps were read? */
	if (!done && !u->read_past && u->nout && !dwfl_addrmodule(p->dwfl, out[u->nout - 1]) &&
	    fr_now_ns(CLOCK_MONOTONIC) - p->read_at >= REREAD_NS && report_maps(u, p))
		done = walk(u, p);
	u->cur = NULL;
	if (u->nout == 0) {
		out[u->nout++] = s->regs[16];
		done = false;
	}
	u->st.frames += u->nout;
	if (done) {
		u->st.complete++;
		return u->nout;
	}
	if (u->read_past) {
		out[u->nout++] = FR_FRAME_TRUNCATED;
		u->st.truncated++;
	} else {
		out[u->nout++] = FR_FRAME_NO_UNWIND_INFO;
		u->st.no_info++;
	}
	return u->nout;
}

void fr_unwinder_forget(struct fr_unwinder *u, uint32_t pid)
{
	uproc_free(fr_pid_map_remove(&u->procs, pid));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void fr_unwinder_trim(struct fr_unwinder *u)
{
	_cleanup_free_ uint64_t *used = NULL;
	_cleanup_free_ uint32_t *victims = NULL;
	size_t i = 0, n = 0, nv = 0;
	struct uproc *p;
	uint32_t pid;
	uint64_t cut;

	/* down to three quarters of the bound, least recently used first */
	if (u->procs.n <= PROCS_MAX)
		return;
	used = malloc(u->procs.n * sizeof(*used));
	victims = malloc(u->procs.n * sizeof(*victims));
	if (!used || !victims)
		return;
	while ((p = fr_pid_map_next(&u->procs, &i, NULL)))
		used[n++] = p->used;
	qsort(used, n, sizeof(*used), cmp_u64);
	cut = used[n - PROCS_MAX * 3 / 4];
	for (i = 0; (p = fr_pid_map_next(&u->procs, &i, &pid));)
		if (p->used < cut)
			victims[nv++] = pid;
	for (i = 0; i < nv; i++)
		fr_unwinder_forget(u, victims[i]);
	u->st.evicted += nv;
}

void fr_unwinder_get_stats(const struct fr_unwinder *u, struct fr_unwinder_stats *ret)
{
	*ret = u->st;
	ret->processes = u->procs.n;
}
