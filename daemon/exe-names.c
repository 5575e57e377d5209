/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/pid-map.h"
#include "exe-names.h"

/* Processes known at once: beyond, new ones are not named (a fork storm
 * must not grow the daemon without bound). */
#define EXE_NAMES_MAX 65536

/* One executable's name, shared by the processes that run it. */
struct exe {
	unsigned refs;
	char name[];
};

struct proc {
	struct exe *exe;
	uint64_t since;  /* CLOCK_BOOTTIME ns of the record that named it */
	uint64_t exited; /* CLOCK_BOOTTIME ns; 0: alive */
};

struct fr_exe_names {
	struct fr_pid_map procs;
};

static void exe_unref(struct exe *e)
{
	if (e && --e->refs == 0)
		free(e);
}

int fr_exe_names_new(struct fr_exe_names **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

static void proc_free(struct proc *p)
{
	if (p) {
		exe_unref(p->exe);
		free(p);
	}
}

struct fr_exe_names *fr_exe_names_free(struct fr_exe_names *x)
{
	struct proc *p;
	size_t i = 0;

	if (!x)
		return NULL;
	while ((p = fr_pid_map_next(&x->procs, &i, NULL)))
		proc_free(p);
	fr_pid_map_done(&x->procs);
	free(x);
	return NULL;
}

/* @pid runs @e (a reference taken here) from @since on; NULL forgets it.
 * The CPUs' records come in batches, one CPU after the other: what a
 * record older than the one that named the process says is past (a
 * shell's exec drained after the exec it then made, on another CPU: the
 * crash of the program it ran was named after the shell).  Returns
 * whether it took it. */
static bool set(struct fr_exe_names *x, uint32_t pid, struct exe *e, uint64_t since)
{
	struct proc *p = fr_pid_map_get(&x->procs, pid);

	if (!p) {
		if (!e || x->procs.n >= EXE_NAMES_MAX || !(p = calloc(1, sizeof(*p))))
			return false;
		if (fr_pid_map_put(&x->procs, pid, p, NULL) < 0) {
			free(p);
			return false;
		}
	} else if (since < p->since)
		return false;
	if (e)
		e->refs++;
	exe_unref(p->exe);
	p->exe = e;
	p->since = since;
	p->exited = 0;
	return true;
}

static bool set_name(struct fr_exe_names *x, uint32_t pid, const char *name, size_t len, uint64_t since)
{
	struct exe *e = malloc(sizeof(*e) + len + 1);
	bool took;

	if (!e)
		return false;
	e->refs = 0;
	memcpy(e->name, name, len);
	e->name[len] = 0;
	took = set(x, pid, e, since);
	if (e->refs == 0)
		free(e);
	return took;
}

bool fr_exe_names_on_record(struct fr_exe_names *x, const struct fr_record *rec)
{
	struct proc *p;

	switch ((enum fr_record_type)rec->type) {
	case FR_REC_EXEC:
		return set_name(x, rec->pid, rec->exec.filename, rec->exec.filename_len, rec->ts);
	case FR_REC_PROCESS:
		/* a kernel thread has none */
		if (rec->process.exe_len)
			return set_name(x, rec->pid, rec->process.exe, rec->process.exe_len, rec->ts);
		break;
	case FR_REC_FORK:
		p = fr_pid_map_get(&x->procs, rec->pid);
		if (p && p->exe)
			return set(x, rec->fork.child_pid, p->exe, rec->ts);
		break;
	case FR_REC_EXIT:
		/* kept a while: the records of its end (a crash's signal, the
		 * rule that fires on it) may come after this one */
		p = fr_pid_map_get(&x->procs, rec->pid);
		if (p)
			p->exited = rec->ts ? rec->ts : 1;
		break;
	case FR_REC_SYSCALL:
	case FR_REC_OFFCPU:
	case FR_REC_RUNQ:
	case FR_REC_BLOCK:
	case FR_REC_OOM:
	case FR_REC_SIGNAL:
	case FR_REC_TCP:
	case FR_REC_SWITCH:
	case FR_REC_SAMPLE:
	case FR_REC_GAP:
	case FR_REC_MARK:
	case FR_REC_METRICS:
	case FR_REC_TRIGGER:
	case FR_REC_CGROUP:
	case FR_REC_MAPPING:
	case FR_REC_SYMBOL:
	case FR_REC_INLINE:
	case FR_REC_PYCODE:
		break;
	}
	return false;
}

void fr_exe_names_prune(struct fr_exe_names *x, uint64_t before)
{
	struct proc *p;
	uint32_t pid;
	size_t i = 0;

	while ((p = fr_pid_map_next(&x->procs, &i, &pid)))
		if (p->exited && p->exited < before)
			proc_free(fr_pid_map_remove(&x->procs, pid));
}

const char *fr_exe_names_get(const struct fr_exe_names *x, uint32_t pid)
{
	const struct proc *p = x ? fr_pid_map_get(&x->procs, pid) : NULL;

	return p && p->exe ? p->exe->name : NULL;
}
