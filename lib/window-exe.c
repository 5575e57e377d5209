/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each pid runs: keyframes and execs name a pid's executable, forks
 * pass it to the child.  A window's items get theirs as its slices are
 * handed out (window_exe_resolve()); a reader of windows one after
 * another carries the names across them (fr_exe_track_*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window-internal.h"

/* In time order: keyframes and execs say what a pid runs, forks pass it to
 * the child; every item of w->items[0..n) gets its pid's exe as of its
 * time.  @map (pid -> 1 + index into w->exes) carries on from the items
 * before; with @copy the names are copied (their chunks will go). */
int window_exe_resolve(struct fr_window *w, struct fr_pid_map *map, size_t *cap, bool copy)
{
	int k = 0;

	for (size_t i = 0; i < w->n && k == 0; i++) {
		struct fr_window_item *it = &w->items[i];
		struct fr_record r;

		if (it->type == FR_REC_PROCESS || it->type == FR_REC_EXEC || it->type == FR_REC_FORK) {
			if (window_item_decode(w, it, &r) < 0)
				continue;
			if (it->type == FR_REC_FORK) {
				void *cur = fr_pid_map_get(map, r.pid);
				if (cur)
					k = fr_pid_map_put(map, r.fork.child_pid, cur, NULL);
			} else if (window_grow((void **)&w->exes, cap, w->nexes + 1, sizeof(*w->exes)) < 0) {
				k = -ENOMEM;
			} else {
				/* an empty exe in a keyframe is a kernel thread */
				struct fr_window_exe x = it->type == FR_REC_PROCESS ?
					(struct fr_window_exe){ r.process.exe, r.process.exe_len, r.process.exe_len == 0 } :
					(struct fr_window_exe){ r.exec.filename, r.exec.filename_len, false };
				if (copy) {
					char *p = malloc(x.len + 1);
					if (!p)
						return -ENOMEM;
					memcpy(p, x.p, x.len);
					p[x.len] = 0;
					x.p = p;
				}
				w->exes[w->nexes++] = x;
				k = fr_pid_map_put(map, r.pid, (void *)(uintptr_t)w->nexes, NULL);
			}
		}
		if (it->pid)
			it->exe = (uint32_t)(uintptr_t)fr_pid_map_get(map, it->pid);
	}
	return k;
}

void window_exes_free(struct fr_window *w, bool copied)
{
	for (size_t i = 0; copied && i < w->nexes; i++)
		free((void *)w->exes[i].p);
	free(w->exes);
	w->exes = NULL;
	w->nexes = 0;
}

/*
 * Executables by pid across windows read one after another: the same
 * rules as a window's own (window_exe_resolve()), but each name copied, so
 * that it outlives the window it came from, and forgotten when its
 * process exits, so that following a store for hours holds the live
 * processes only.
 */
struct fr_exe_track {
	struct fr_pid_map pids; /* pid -> struct tracked_exe */
	struct tracked_exe *exited; /* the last exit's, kept for its entry */
};

struct tracked_exe {
	uint32_t len;
	bool kernel_thread;
	char name[];
};

static struct tracked_exe *tracked_exe_new(const char *p, uint32_t len, bool kernel_thread)
{
	struct tracked_exe *x = malloc(sizeof(*x) + len + 1);

	if (!x)
		return NULL;
	x->len = len;
	x->kernel_thread = kernel_thread;
	memcpy(x->name, p, len);
	x->name[len] = 0;
	return x;
}

int fr_exe_track_new(struct fr_exe_track **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

struct fr_exe_track *fr_exe_track_free(struct fr_exe_track *t)
{
	size_t i = 0;
	void *v;

	if (!t)
		return NULL;
	while ((v = fr_pid_map_next(&t->pids, &i, NULL)))
		free(v);
	fr_pid_map_done(&t->pids);
	free(t->exited);
	free(t);
	return NULL;
}

int fr_exe_track_entry(struct fr_exe_track *t, struct fr_window_entry *e)
{
	const struct fr_record *r = &e->r;
	struct tracked_exe *x = NULL, *cur = NULL;
	bool names = false;
	int k = 0;

	free(t->exited);
	t->exited = NULL;
	if (r->type == FR_REC_PROCESS) { /* an empty exe in a keyframe is a kernel thread */
		names = true;
		x = tracked_exe_new(r->process.exe, r->process.exe_len, r->process.exe_len == 0);
	} else if (r->type == FR_REC_EXEC) {
		names = true;
		x = tracked_exe_new(r->exec.filename, r->exec.filename_len, false);
	} else if (r->type == FR_REC_FORK && (cur = fr_pid_map_get(&t->pids, r->pid))) {
		names = true;
		x = tracked_exe_new(cur->name, cur->len, cur->kernel_thread);
	}
	if (names && !x)
		k = -ENOMEM;
	else if (x) {
		void *old = NULL;

		k = fr_pid_map_put(&t->pids, r->type == FR_REC_FORK ? r->fork.child_pid : r->pid, x, &old);
		free(old);
		if (k < 0)
			free(x);
	}
	cur = r->pid ? fr_pid_map_get(&t->pids, r->pid) : NULL;
	e->exe = cur && !cur->kernel_thread ? cur->name : NULL;
	e->exe_len = cur && !cur->kernel_thread ? cur->len : 0;
	e->kernel_thread = cur && cur->kernel_thread;
	/* the exit's own entry still names it, until the next entry */
	if (r->type == FR_REC_EXIT && cur)
		t->exited = fr_pid_map_remove(&t->pids, r->pid);
	return k;
}
