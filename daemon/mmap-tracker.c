/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each process maps, from the kernel's side-band events (mmap-tracker.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/macro.h"
#include "../lib/pid-map.h"
#include "log.h"
#include "mapped-file.h"
#include "mmap-tracker.h"

/* A mapped file's path, one per distinct path (interned: every process
 * maps libc), shared by the mappings that name it. */
struct tpath {
	unsigned refs;
	uint32_t hash;
	struct tpath *next; /* in its bucket */
	char s[];
};
#define PATH_BUCKETS 4096

struct tmap {
	uint64_t start, end, pgoff;
	uint64_t ino;
	uint32_t maj, min;
	struct tpath *path;
};

/* A process's mappings by start address, shared by a parent and the
 * children it forked until one of them changes it. */
struct mapset {
	unsigned refs;
	unsigned n, cap;
	struct tmap v[];
};

struct tproc {
	uint32_t pid;
	uint64_t since;       /* event time of the fork or exec it was last made by */
	uint64_t exe_ino;     /* the first executable mapping after its exec */
	bool exe_known;
	bool execed;          /* its exec (or its parent's) was seen: else what
				 it maps first may be any library it opens */
	uint64_t exited_at;   /* CLOCK_MONOTONIC ns, 0 while it lives */
	struct mapset *maps;  /* NULL: none */
};

/* A process that exited, in the order they did: the oldest go first. */
struct gone {
	uint32_t pid;
	uint64_t at; /* its tproc's exited_at */
};

struct fr_mmap_tracker {
	struct perf_buffer *pb;
	int map_fd;
	struct fr_pid_map procs;
	struct tpath *paths[PATH_BUCKETS];
	struct gone *gone; /* a ring of FR_TRACKER_PROCS */
	size_t gone_head, gone_n;
	uint64_t nmappings; /* in all mapsets, a shared one once */
	struct fr_mmap_tracker_stats st;
	bool warned_lost;
	/* one poll's events, copied, to be applied in time order */
	uint8_t *batch;
	size_t batch_len, batch_cap;
	struct batched *order;
	size_t norder, order_cap;
};

/* An event of the poll: its time, its place in the batch.  A process
 * that moves between CPUs leaves its events in several rings, which are
 * read one after the other: its exec on one CPU and the library it maps
 * next on another could be read in reverse, and the exec would wipe the
 * newer mapping (libc lost: a process that exits then is named without
 * it).  So a poll applies what it read sorted by time. */
struct batched {
	uint64_t time;
	size_t at; /* offset of its perf_event_header in batch */
};

/* Records as the kernel lays them out after struct perf_event_header
 * (include/uapi/linux/perf_event.h). */
struct ev_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};
struct ev_comm {
	uint32_t pid, tid;
	char comm[];
};
struct ev_task { /* FORK, EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
struct ev_lost {
	uint64_t id, lost;
};

static uint32_t path_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The interned @s, one reference more; NULL when out of memory. */
static struct tpath *path_get(struct fr_mmap_tracker *t, const char *s)
{
	uint32_t h = path_hash(s);
	struct tpath **b = &t->paths[h % PATH_BUCKETS], *p;
	size_t len = strlen(s);

	for (p = *b; p; p = p->next)
		if (p->hash == h && !strcmp(p->s, s)) {
			p->refs++;
			return p;
		}
	p = malloc(sizeof(*p) + len + 1);
	if (!p)
		return NULL;
	*p = (struct tpath){ .refs = 1, .hash = h, .next = *b };
	memcpy(p->s, s, len + 1);
	*b = p;
	return p;
}

static void path_unref(struct fr_mmap_tracker *t, struct tpath *p)
{
	struct tpath **b;

	if (!p || --p->refs > 0)
		return;
	for (b = &t->paths[p->hash % PATH_BUCKETS]; *b != p; b = &(*b)->next)
		;
	*b = p->next;
	free(p);
}

static void mapset_unref(struct fr_mmap_tracker *t, struct mapset *m)
{
	if (!m || --m->refs > 0)
		return;
	for (unsigned i = 0; i < m->n; i++)
		path_unref(t, m->v[i].path);
	t->nmappings -= m->n;
	free(m);
}

static void proc_free(struct fr_mmap_tracker *t, struct tproc *p)
{
	if (!p)
		return;
	mapset_unref(t, p->maps);
	free(p);
}

/* @p's mapset, its own (copied if shared), with room for one more. */
static struct mapset *own_maps(struct fr_mmap_tracker *t, struct tproc *p)
{
	struct mapset *m = p->maps, *c;
	unsigned n = m ? m->n : 0, cap;

	if (m && m->refs == 1 && m->n < m->cap)
		return m;
	cap = MAX(n * 2, 16u);
	if (m && m->refs == 1) {
		c = realloc(m, sizeof(*m) + cap * sizeof(m->v[0]));
		if (!c)
			return NULL;
		c->cap = cap;
		return p->maps = c;
	}
	c = malloc(sizeof(*c) + cap * sizeof(c->v[0]));
	if (!c)
		return NULL;
	c->refs = 1;
	c->n = n;
	c->cap = cap;
	for (unsigned i = 0; i < n; i++) {
		c->v[i] = m->v[i];
		c->v[i].path->refs++;
	}
	t->nmappings += n;
	mapset_unref(t, m);
	return p->maps = c;
}

/* Drops the process that exited first, if it exited before @before (0:
 * whenever it did); false when there is none.  An entry whose process
 * was made again since (a pid reused) is passed over. */
static bool evict_oldest_exited(struct fr_mmap_tracker *t, uint64_t before)
{
	while (t->gone_n) {
		struct gone g = t->gone[t->gone_head];
		struct tproc *p;

		if (before && g.at + FR_TRACKER_KEEP_NS >= before)
			return false;
		t->gone_head = (t->gone_head + 1) % FR_TRACKER_PROCS;
		t->gone_n--;
		p = fr_pid_map_get(&t->procs, g.pid);
		if (p && p->exited_at == g.at) {
			proc_free(t, fr_pid_map_remove(&t->procs, g.pid));
			t->st.evicted++;
			return true;
		}
	}
	return false;
}

static struct tproc *proc_get(struct fr_mmap_tracker *t, uint32_t pid, bool create)
{
	struct tproc *p = fr_pid_map_get(&t->procs, pid);

	if (p || !create)
		return p;
	if (t->procs.n >= FR_TRACKER_PROCS && !evict_oldest_exited(t, 0))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (fr_pid_map_put(&t->procs, pid, p, NULL) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void on_mmap2(struct fr_mmap_tracker *t, const struct ev_mmap2 *e, size_t len, uint64_t time)
{
	size_t flen = len - sizeof(*e);
	struct tproc *p;
	struct mapset *m;
	struct tpath *path;
	uint64_t end = e->addr + e->len;
	unsigned at, drop = 0, k;

	/* anonymous code (JIT), [vdso], [uprobes]: no file to name it by */
	if (e->pid == 0 || !flen || e->filename[0] != '/' || !memchr(e->filename, 0, flen) || end <= e->addr)
		return;
	p = proc_get(t, e->pid, true);
	if (!p) {
		t->st.refused++;
		return;
	}
	/* made before the exec (or fork) already read from another CPU */
	if (time < p->since)
		return;
	if (!p->exe_known && p->execed) {
		p->exe_ino = e->ino;
		p->exe_known = true;
	}
	if ((p->maps && p->maps->n >= FR_MAPS_FILES_MAX) ||
	    (t->nmappings >= FR_TRACKER_MAPPINGS && !evict_oldest_exited(t, 0))) {
		t->st.refused++;
		return;
	}
	m = own_maps(t, p);
	path = m ? path_get(t, e->filename) : NULL;
	if (!path) {
		t->st.refused++;
		return;
	}
	/* the new mapping replaces what it overlaps (munmaps are not
	 * reported: a library closed and another opened in its place) */
	for (at = 0; at < m->n && m->v[at].end <= e->addr; at++)
		;
	for (k = at; k < m->n && m->v[k].start < end; k++) {
		path_unref(t, m->v[k].path);
		drop++;
	}
	memmove(&m->v[at + 1], &m->v[at + drop], (m->n - at - drop) * sizeof(m->v[0]));
	m->v[at] = (struct tmap){ .start = e->addr, .end = end, .pgoff = e->pgoff, .ino = e->ino,
				  .maj = e->maj, .min = e->min, .path = path };
	m->n = m->n - drop + 1;
	t->nmappings = t->nmappings - drop + 1;
	t->st.mmaps++;
}

static void on_exec(struct fr_mmap_tracker *t, uint32_t pid, uint64_t time)
{
	struct tproc *p = proc_get(t, pid, true);

	t->st.execs++;
	if (!p || time < p->since)
		return;
	p->since = time;
	mapset_unref(t, p->maps);
	p->maps = NULL;
	p->exe_known = false;
	p->execed = true;
	p->exe_ino = 0;
	p->exited_at = 0;
}

static void on_fork(struct fr_mmap_tracker *t, const struct ev_task *e, uint64_t time)
{
	struct tproc *parent, *child;

	if (e->pid == e->ppid) /* a thread */
		return;
	t->st.forks++;
	/* the child first: making room for it may drop an exited process,
	 * the parent among them (its exit read first, from another CPU) */
	child = proc_get(t, e->pid, true);
	parent = fr_pid_map_get(&t->procs, e->ppid);
	/* the child's exec, on another CPU, was read first: it is newer */
	if (!child || time < child->since)
		return;
	child->since = time;
	/* a pid reused: what the old process mapped is not the new one's */
	mapset_unref(t, child->maps);
	child->maps = NULL;
	child->exited_at = 0;
	child->exe_known = parent && parent->exe_known;
	child->execed = parent && parent->execed;
	child->exe_ino = parent ? parent->exe_ino : 0;
	if (parent && parent->maps) {
		child->maps = parent->maps;
		child->maps->refs++;
	}
}

static void on_exit_ev(struct fr_mmap_tracker *t, const struct ev_task *e, uint64_t time)
{
	struct tproc *p;

	if (e->pid != e->tid) /* a thread, not the process */
		return;
	t->st.exits++;
	p = fr_pid_map_get(&t->procs, e->pid);
	/* (not a process made since with the same pid) */
	if (!p || time < p->since || p->exited_at)
		return;
	/* the queue is as long as the table: room, or its oldest goes */
	if (t->gone_n == FR_TRACKER_PROCS)
		(void)evict_oldest_exited(t, 0);
	p->exited_at = fr_now_ns(CLOCK_MONOTONIC);
	t->gone[(t->gone_head + t->gone_n++) % FR_TRACKER_PROCS] = (struct gone){ .pid = e->pid, .at = p->exited_at };
}

/* Applies event @h (its time ends it: sample_id_all). */
static void apply_event(struct fr_mmap_tracker *t, const struct perf_event_header *h, uint64_t time)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t len = h->size - sizeof(*h) - sizeof(time);

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (len > sizeof(struct ev_mmap2) && !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			on_mmap2(t, (const struct ev_mmap2 *)body, len, time);
		break;
	case PERF_RECORD_COMM:
		if (len >= sizeof(struct ev_comm) && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
			on_exec(t, ((const struct ev_comm *)body)->pid, time);
		break;
	case PERF_RECORD_FORK:
		if (len >= sizeof(struct ev_task))
			on_fork(t, (const struct ev_task *)body, time);
		break;
	case PERF_RECORD_EXIT:
		if (len >= sizeof(struct ev_task))
			on_exit_ev(t, (const struct ev_task *)body, time);
		break;
	}
}

static enum bpf_perf_event_ret on_event(void *ctx, int cpu, struct perf_event_header *h)
{
	struct fr_mmap_tracker *t = ctx;
	const uint8_t *body = (const uint8_t *)(h + 1);
	uint64_t time;

	t->st.events++;
	if (h->type == PERF_RECORD_LOST) {
		if (h->size >= sizeof(*h) + sizeof(struct ev_lost)) {
			t->st.lost += ((const struct ev_lost *)body)->lost;
			if (!t->warned_lost)
				log_warning("Mapping events lost in the kernel (its rings were full): processes that exit may lose the names of their stacks; counted in status.");
			t->warned_lost = true;
		}
		return LIBBPF_PERF_EVENT_CONT;
	}
	/* every other record ends in its time (sample_id_all, PERF_SAMPLE_TIME) */
	if (h->size < sizeof(*h) + sizeof(time))
		return LIBBPF_PERF_EVENT_CONT;
	memcpy(&time, body + h->size - sizeof(*h) - sizeof(time), sizeof(time));
	/* kept for the poll's end; with no room, applied at once */
	if (t->batch_len + h->size > t->batch_cap) {
		size_t cap = MAX(t->batch_cap * 2, t->batch_len + h->size + 65536);
		uint8_t *b = realloc(t->batch, cap);
		if (!b) {
			apply_event(t, h, time);
			return LIBBPF_PERF_EVENT_CONT;
		}
		t->batch = b;
		t->batch_cap = cap;
	}
	if (t->norder == t->order_cap) {
		size_t cap = MAX(t->order_cap * 2, (size_t)1024);
		struct batched *o = realloc(t->order, cap * sizeof(*o));
		if (!o) {
			apply_event(t, h, time);
			return LIBBPF_PERF_EVENT_CONT;
		}
		t->order = o;
		t->order_cap = cap;
	}
	memcpy(t->batch + t->batch_len, h, h->size);
	t->order[t->norder++] = (struct batched){ .time = time, .at = t->batch_len };
	t->batch_len += h->size;
	return LIBBPF_PERF_EVENT_CONT;
}

/* by time; ties in the order read */
static int cmp_batched(const void *a, const void *b)
{
	const struct batched *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int fr_mmap_tracker_new(unsigned ncpu, struct fr_mmap_tracker **ret)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* each record ends in its time: events of a process read from
		 * different CPUs' rings are put in order by it */
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* read at each drain: no wakeups */
		.watermark = 1,
		.wakeup_watermark = FR_TRACKER_PAGES * 4096 / 2,
	};
	struct fr_mmap_tracker *t = calloc(1, sizeof(*t));
	int k;

	if (!t)
		return -ENOMEM;
	t->gone = calloc(FR_TRACKER_PROCS, sizeof(*t->gone));
	if (!t->gone) {
		free(t);
		return -ENOMEM;
	}
	t->map_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "fr_mmaps", sizeof(int), sizeof(int), ncpu, NULL);
	if (t->map_fd < 0) {
		k = -errno;
		free(t->gone);
		free(t);
		return k;
	}
	t->pb = perf_buffer__new_raw(t->map_fd, FR_TRACKER_PAGES, &a, on_event, t, NULL);
	if (!t->pb) {
		k = -errno;
		close(t->map_fd);
		free(t->gone);
		free(t);
		return k;
	}
	*ret = t;
	return 0;
}

struct fr_mmap_tracker *fr_mmap_tracker_free(struct fr_mmap_tracker *t)
{
	struct tproc *p;
	size_t i = 0;
	uint32_t pid;

	if (!t)
		return NULL;
	perf_buffer__free(t->pb);
	if (t->map_fd >= 0)
		close(t->map_fd);
	while ((p = fr_pid_map_next(&t->procs, &i, &pid)))
		proc_free(t, p);
	fr_pid_map_done(&t->procs);
	free(t->gone);
	free(t->batch);
	free(t->order);
	free(t);
	return NULL;
}

void fr_mmap_tracker_poll(struct fr_mmap_tracker *t)
{
	if (!t)
		return;
	(void)perf_buffer__consume(t->pb);
	if (t->norder > 1) /* (qsort's base may not be NULL, even for none) */
		qsort(t->order, t->norder, sizeof(*t->order), cmp_batched);
	/* (the batch holds whole headers at 8-byte offsets: perf records are
	 * multiples of 8 bytes long) */
	for (size_t i = 0; i < t->norder; i++)
		apply_event(t, (const struct perf_event_header *)(void *)(t->batch + t->order[i].at), t->order[i].time);
	t->norder = 0;
	t->batch_len = 0;
	/* exited long enough ago that no record of theirs is still to come */
	while (evict_oldest_exited(t, fr_now_ns(CLOCK_MONOTONIC)))
		;
}

int fr_mmap_tracker_maps(struct fr_mmap_tracker *t, uint32_t pid, uint64_t *exe_ino)
{
	struct tproc *p;
	const struct mapset *m;
	FILE *f;
	int fd, k = 0;

	if (!t)
		return -ESRCH;
	/* what it mapped after this drain's poll (a process started since,
	 * a library it opened) was reported before the record being read */
	fr_mmap_tracker_poll(t);
	p = fr_pid_map_get(&t->procs, pid);
	if (!p || !p->maps || !p->maps->n)
		return -ESRCH;
	m = p->maps;
	fd = memfd_create("fr-maps", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	f = fdopen(dup(fd), "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < m->n; i++) {
		const struct tmap *x = &m->v[i];
		uint64_t head = x->pgoff & ~4095ULL;

		/* the pages from offset 0 (ELF headers, read-only data), where
		 * a loader maps them: the module starts there */
		if (head && head <= x->start && (i == 0 || m->v[i - 1].end <= x->start - head))
			fprintf(f, "%" PRIx64 "-%" PRIx64 " r--p 00000000 %02x:%02x %" PRIu64 " %s\n", x->start - head,
				x->start, x->maj, x->min, x->ino, x->path->s);
		fprintf(f, "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " %02x:%02x %" PRIu64 " %s\n", x->start, x->end,
			x->pgoff, x->maj, x->min, x->ino, x->path->s);
	}
	if (fclose(f) != 0)
		k = -EIO;
	if (k == 0 && (lseek(fd, 0, SEEK_SET) < 0 ||
		       fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0))
		k = -errno;
	if (k < 0) {
		close(fd);
		return k;
	}
	*exe_ino = p->exe_ino;
	t->st.served++;
	return fd;
}

void fr_mmap_tracker_get_stats(const struct fr_mmap_tracker *t, struct fr_mmap_tracker_stats *ret)
{
	*ret = t ? t->st : (struct fr_mmap_tracker_stats){};
	if (t) {
		ret->processes = t->procs.n;
		ret->mappings = t->nmappings;
	}
}
