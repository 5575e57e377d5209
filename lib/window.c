/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The window (window.h): chunks selected from a store, loaded on every
 * CPU whole (fr_window_load) or a slice at a time (fr_window_stream_*),
 * merged into time order; frames named, executables tracked.
 *
 * Long because it holds both loaders, the whole one and the streaming
 * one, and what they share; another part of issue 32 makes them one
 * loader, and the file is split by concept then, not before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <zstd.h>

#include "big-alloc.h"
#include "ksyms.h"
#include "late-names.h"
#include "macro.h"
#include "out-buf.h"
#include "record-fields.h"
#include "pid-map.h"
#include "store-format.h"
#include "window-sort.h"
#include "window.h"

struct fr_window_ksyms {
	uint8_t boot_id[16];
	struct fr_ksyms *k; /* NULL: no snapshot */
};

struct collect {
	struct fr_chunk_ref *refs;
	size_t n, cap;
	uint64_t since, until;
	const struct fr_window_query *q;
	/* the keyframe just before the window (all its chunks share one time) */
	struct fr_chunk_ref *kf;
	size_t nkf, kfcap;
	uint64_t kf_time;
	/* chunks between that keyframe and the window: their exec and fork
	 * records name processes born after the keyframe */
	struct fr_chunk_ref *pre;
	size_t npre, precap;
};

static uint64_t ref_last(const struct fr_chunk_ref *ref)
{
	return ref->info.last_ts + (uint64_t)ref->info.realtime_offset;
}

static void prune_pre(struct collect *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->npre; i++)
		if (ref_last(&c->pre[i]) >= c->kf_time)
			c->pre[k++] = c->pre[i];
	c->npre = k;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int collect_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct collect *c = userdata;
	int64_t off = ref->info.realtime_offset;
	uint64_t first = ref->info.first_ts + (uint64_t)off;
	uint64_t last = ref->info.last_ts + (uint64_t)off;

	if (c->q->one_boot && memcmp(ref->info.boot_id, c->q->boot_id, 16) != 0)
		return 0;
	if (ref->info.cpu == FR_CPU_META && last < c->since) {
		if (c->nkf && first < c->kf_time)
			return 0;
		if (!c->nkf || first > c->kf_time)
			c->nkf = 0;
		c->kf_time = first;
		prune_pre(c);
		if (grow((void **)&c->kf, &c->kfcap, c->nkf + 1, sizeof(*c->kf)) < 0)
			return -ENOMEM;
		c->kf[c->nkf++] = *ref;
		return 0;
	}
	if (last < c->since) {
		if (c->nkf && last < c->kf_time)
			return 0;
		if (grow((void **)&c->pre, &c->precap, c->npre + 1, sizeof(*c->pre)) < 0)
			return -ENOMEM;
		c->pre[c->npre++] = *ref;
		return 0;
	}
	if (last < c->since || first > c->until)
		return 0;
	if (grow((void **)&c->refs, &c->cap, c->n + 1, sizeof(*c->refs)) < 0)
		return -ENOMEM;
	c->refs[c->n++] = *ref;
	return 0;
}

struct cgroup_desc {
	uint64_t id;
	const char *path;
	uint32_t len;
	uint32_t seq; /* order in the chunk: the newest description wins */
};

_Static_assert(sizeof(struct fr_window_item) == 32, "items are sorted and kept by the million");

struct fr_window_chunk {
	uint8_t *buf;            /* the decoded payload */
	const uint32_t *rec_off; /* streamed with query.line: item pos's record
				    is at buf + rec_off[pos] */
	struct fr_window_entry *ents; /* streamed: its items' records, decoded once
				    (an item's pos indexes them) */
	const char *lines;       /* streamed with query.line: item pos's line */
	const uint32_t *line_off;/* is lines[line_off[pos]..line_off[pos + 1]) */
	struct fr_symtab symtab; /* the code it describes */
	struct cgroup_desc *cg;  /* the cgroups it describes, by id */
	size_t ncg, cgcap;
};

struct fr_window_exe {
	const char *p;
	uint32_t len;
	bool kernel_thread;
};

static int cmp_cgroup(const void *a, const void *b)
{
	const struct cgroup_desc *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted by id, one per id: the last description of it. */
static void cgroups_finish(struct fr_window_chunk *c)
{
	size_t k = 0;

	if (c->ncg > 1)
		qsort(c->cg, c->ncg, sizeof(*c->cg), cmp_cgroup);
	for (size_t i = 0; i < c->ncg; i++) {
		if (k && c->cg[k - 1].id == c->cg[i].id)
			k--;
		c->cg[k++] = c->cg[i];
	}
	c->ncg = k;
}

static const struct cgroup_desc *cgroup_find(const struct fr_window_chunk *c, uint64_t id)
{
	size_t lo = 0, hi = c->ncg;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->cg[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ncg && c->cg[lo].id == id ? &c->cg[lo] : NULL;
}

/* A buffer and its size, kept for reuse. */
struct spare {
	void *p;
	size_t cap;
};

/* One chunk's share of the loading, done by whichever thread takes it. */
struct chunk_job {
	uint32_t idx;      /* the chunk's index in fr_window.cd */
	size_t first, max; /* its slice of the items (whole-window load) */
	struct fr_window_item *items; /* room for max items */
	struct fr_window_entry *ents; /* NULL, or room for max records */
	uint32_t *rec_off;            /* with lines: room for max offsets */
	struct spare *lines;          /* with query.line: the lines, */
	uint32_t *line_off;           /* and room for max + 1 offsets */
	uint8_t *buf;      /* room for its payload */
	size_t n;          /* items it gave */
	uint64_t bad;      /* records that did not decode */
	int k;             /* 0, -EBADMSG (damaged: skipped) or fatal */
	bool done;         /* streamed: k and the rest are set */
};

/* Records decoded at once (7 KiB of them, on the stack). */
#define DECODE_BATCH 64

/* Record @rec of loaded chunk @idx, its row at @start: a name goes into
 * the chunk's tables; a record of the window (or context for it) becomes
 * the next item of the chunk's slice, and streamed, the next entry. */
static int chunk_record(struct fr_window *w, uint32_t idx, const struct fr_chunk_ref *ref, struct chunk_job *job,
			struct fr_record *rec, size_t start, uint64_t since, uint64_t until)
{
	struct fr_window_chunk *c = &w->cd[idx];

	if (rec->type == FR_REC_MAPPING || rec->type == FR_REC_SYMBOL || rec->type == FR_REC_INLINE)
		return fr_symtab_add(&c->symtab, rec) < 0 ? -ENOMEM : 0;
	if (rec->type == FR_REC_CGROUP) {
		if (grow((void **)&c->cg, &c->cgcap, c->ncg + 1, sizeof(*c->cg)) < 0)
			return -ENOMEM;
		c->cg[c->ncg] = (struct cgroup_desc){ rec->cgroup_id, rec->cgroup.path, rec->cgroup.path_len,
						      (uint32_t)c->ncg };
		c->ncg++;
		return 0;
	}
	uint64_t wall = rec->ts + (uint64_t)ref->info.realtime_offset;
	bool hidden = false;
	/* keyframe records, and exec/fork records before the window,
	 * are kept as context: they name the window's processes */
	if (rec->type == FR_REC_PROCESS)
		hidden = true;
	else if (wall > until)
		return 0;
	else if (wall < since) {
		if (rec->type != FR_REC_EXEC && rec->type != FR_REC_FORK)
			return 0;
		hidden = true;
	}
	if (job->n == job->max) /* cannot be: a record takes 7 bytes at least */
		return -EBADMSG;
	if (job->ents) {
		struct fr_record *to = &job->ents[job->n].r;
		if (to != rec)
			*to = *rec;
		to->cpu = ref->info.cpu;
		if (job->rec_off)
			job->rec_off[job->n] = (uint32_t)start;
		start = job->n;
	}
	job->items[job->n++] = (struct fr_window_item){ .wall_ns = wall, .chunk = idx, .pos = (uint32_t)start,
							 .pid = rec->pid, .type = rec->type, .hidden = hidden };
	return 0;
}

/* The first pass over loaded chunk @idx, its records read by @it (which
 * leaves them as rows in the chunk's buffer) in batches: names go into
 * its tables, and each record of the window (or context for it) becomes
 * an item in the chunk's slice of them. */
static int decode_chunk(struct fr_window *w, uint32_t idx, const struct fr_chunk_ref *ref, struct chunk_job *job,
			struct fr_record_iter *it, uint64_t since, uint64_t until)
{
	struct fr_window_chunk *c = &w->cd[idx];
	struct fr_record batch[DECODE_BATCH];
	size_t starts[DECODE_BATCH];

	for (uint32_t i = 0; i < ref->info.nrecords;) {
		size_t want = MIN(ref->info.nrecords - i, DECODE_BATCH), got;
		/* streamed, records are decoded where they are kept (those
		 * not kept are overwritten, or moved over by those after) */
		struct fr_window_entry *in_place = job->ents && job->max - job->n >= want ? &job->ents[job->n] : NULL;
		int k;

		got = in_place ? fr_record_iter_read(it, &in_place->r, sizeof(*in_place), starts, want)
			       : fr_record_iter_read(it, batch, sizeof(*batch), starts, want);
		for (size_t j = 0; j < got; j++)
			if ((k = chunk_record(w, idx, ref, job, in_place ? &in_place[j].r : &batch[j], starts[j], since,
					      until)) < 0)
				return k;
		i += (uint32_t)got;
		if (got < want) {
			job->bad = ref->info.nrecords - i;
			break;
		}
	}
	cgroups_finish(c);
	fr_symtab_finish(&c->symtab);
	return 0;
}

/* Streamed with query.line: the second pass over chunk @idx, once its
 * names are all known, writes the line of each of its items, in the
 * loading thread @slot, while the chunk is fresh in its cache. */
static int chunk_lines(struct fr_window *w, const struct fr_window_query *q, uint32_t idx, struct chunk_job *job,
		       unsigned slot)
{
	struct fr_window_chunk *c = &w->cd[idx];
	struct fr_out o = { .p = job->lines->p, .cap = job->lines->cap };

	for (size_t j = 0; j < job->n; j++) {
		const struct fr_window_item *it = &job->items[j];
		struct fr_window_entry *e = &job->ents[j];
		const struct cgroup_desc *cg;

		job->line_off[j] = (uint32_t)o.len;
		if (it->hidden)
			continue;
		/* the record is in place: the rest of its entry joins it */
		cg = cgroup_find(c, e->r.cgroup_id);
		e->wall_ns = it->wall_ns;
		e->chunk = idx;
		e->cgroup = cg ? cg->path : NULL;
		e->cgroup_len = cg ? cg->len : 0;
		e->exe = NULL;
		e->exe_len = 0;
		e->kernel_thread = false;
		e->hidden = false;
		q->line(w, it, e, slot, &o, q->line_userdata);
		/* the offsets are 32 bits: no chunk's lines come near */
		if (o.len > UINT32_MAX)
			o.err = EFBIG;
	}
	job->line_off[job->n] = (uint32_t)o.len;
	*job->lines = (struct spare){ o.p, o.cap };
	c->lines = o.p;
	c->line_off = job->line_off;
	return -o.err;
}

/* Items a chunk can give: one per record, and a record takes 7 bytes at
 * least. */
static size_t chunk_max_items(const struct fr_chunk_ref *ref)
{
	return MIN(ref->info.nrecords, ref->info.raw_size / 7);
}

/* Decodes item @it (the same bytes decoded when the window loaded). */
static int item_decode(const struct fr_window *w, const struct fr_window_item *it, struct fr_record *r)
{
	const struct fr_chunk_info *ci = &w->chunks[it->chunk];
	struct fr_codec_state st = { .incompat_flags = ci->incompat_flags };
	size_t pos = it->pos;
	int k;

	if (w->cd[it->chunk].ents) {
		*r = w->cd[it->chunk].ents[it->pos].r;
		return 0;
	}
	if (!w->cd[it->chunk].buf)
		return -ENODATA; /* query.lines_only */
	if (w->cd[it->chunk].rec_off)
		pos = w->cd[it->chunk].rec_off[it->pos];
	k = fr_record_decode(&st, w->cd[it->chunk].buf, ci->raw_size, &pos, r);

	/* the time is delta-coded: it comes from the item */
	r->ts = it->wall_ns - (uint64_t)ci->realtime_offset;
	r->cpu = ci->cpu;
	return k;
}

/* In time order: keyframes and execs say what a pid runs, forks pass it to
 * the child; every item of w->items[0..n) gets its pid's exe as of its
 * time.  @map (pid -> 1 + index into w->exes) carries on from the items
 * before; with @copy the names are copied (their chunks will go). */
static int resolve_exe_items(struct fr_window *w, struct fr_pid_map *map, size_t *cap, bool copy)
{
	int k = 0;

	for (size_t i = 0; i < w->n && k == 0; i++) {
		struct fr_window_item *it = &w->items[i];
		struct fr_record r;

		if (it->type == FR_REC_PROCESS || it->type == FR_REC_EXEC || it->type == FR_REC_FORK) {
			if (item_decode(w, it, &r) < 0)
				continue;
			if (it->type == FR_REC_FORK) {
				void *cur = fr_pid_map_get(map, r.pid);
				if (cur)
					k = fr_pid_map_put(map, r.fork.child_pid, cur, NULL);
			} else if (grow((void **)&w->exes, cap, w->nexes + 1, sizeof(*w->exes)) < 0) {
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

static int resolve_exe(struct fr_window *w)
{
	struct fr_pid_map map = {};
	size_t cap = 0;
	int k = resolve_exe_items(w, &map, &cap, false);

	fr_pid_map_done(&map);
	return k;
}

int fr_window_get(const struct fr_window *w, size_t i, struct fr_window_entry *e)
{
	const struct fr_window_item *it = &w->items[i];
	const struct cgroup_desc *cg;
	int k = item_decode(w, it, &e->r);

	e->wall_ns = it->wall_ns;
	e->chunk = it->chunk;
	e->hidden = it->hidden;
	e->exe = NULL;
	e->exe_len = 0;
	e->kernel_thread = false;
	if (it->exe) {
		const struct fr_window_exe *x = &w->exes[it->exe - 1];
		e->kernel_thread = x->kernel_thread;
		if (!x->kernel_thread) {
			e->exe = x->p;
			e->exe_len = x->len;
		}
	}
	cg = k == 0 ? cgroup_find(&w->cd[it->chunk], e->r.cgroup_id) : NULL;
	e->cgroup = cg ? cg->path : NULL;
	e->cgroup_len = cg ? cg->len : 0;
	return k;
}

const char *fr_window_line(const struct fr_window *w, size_t i, size_t *len)
{
	const struct fr_window_item *it = &w->items[i];
	const struct fr_window_chunk *c = &w->cd[it->chunk];

	*len = c->line_off[it->pos + 1] - c->line_off[it->pos];
	return c->lines + c->line_off[it->pos];
}

static void collect_free(struct collect *c)
{
	free(c->refs);
	free(c->kf);
	free(c->pre);
}

/* The chunks collected: the window's, then the keyframe before it and the
 * context between them.  Frees the rest of @c. */
static int collect_finish(struct collect *c, struct fr_chunk_ref **ret, size_t *nret)
{
	int k = 0;

	/* without a keyframe before the window there is nothing to anchor
	 * the context chunks to: the window names what it can */
	if (!c->nkf)
		c->npre = 0;
	prune_pre(c);
	for (size_t i = 0; i < c->nkf + c->npre; i++) {
		if (grow((void **)&c->refs, &c->cap, c->n + 1, sizeof(*c->refs)) < 0) {
			k = -ENOMEM;
			goto fail;
		}
		c->refs[c->n++] = i < c->nkf ? c->kf[i] : c->pre[i - c->nkf];
	}
	free(c->kf);
	free(c->pre);
	*ret = c->refs;
	*nret = c->n;
	return 0;
fail:
	collect_free(c);
	return k;
}

int fr_window_select(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_chunk_ref **ret,
		     size_t *nret)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .q = q };
	/* one boot: the keyframes the segments' summaries name may be
	 * another boot's */
	int k = q->one_boot ? fr_store_reader_foreach(r, collect_cb, &c) :
			      fr_store_reader_foreach_since(r, q->since_ns, collect_cb, &c);

	if (k < 0) {
		collect_free(&c);
		return k;
	}
	return collect_finish(&c, ret, nret);
}

int fr_window_select_from(const struct fr_window_query *q, const struct fr_chunk_ref *refs, size_t n,
			  struct fr_chunk_ref **ret, size_t *nret)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .q = q };

	for (size_t i = 0; i < n; i++) {
		int k = collect_cb(&refs[i], &c);
		if (k < 0) {
			collect_free(&c);
			return k;
		}
	}
	return collect_finish(&c, ret, nret);
}

struct load {
	struct fr_window *w;
	struct fr_store_reader *r;
	const struct fr_window_query *q;
	const struct fr_chunk_ref *refs;
	struct chunk_job *jobs;
	size_t n;
	size_t next, done; /* atomic */
	size_t total;      /* for progress: done counts on from an earlier load */
};

/* What a loading thread keeps from chunk to chunk. */
struct loader {
	ZSTD_DCtx *dctx;
	void *buf; /* the compressed payload */
	size_t cap;
	struct fr_window_entry *ents; /* with query.line: one chunk's records */
	size_t ents_cap;
	unsigned slot;
};

static void loader_done(struct loader *t)
{
	ZSTD_freeDCtx(t->dctx);
	free(t->buf);
	free(t->ents);
	*t = (struct loader){};
}

/* Loads, decompresses and decodes the chunk of @job (and with query.line,
 * writes its lines); the result in job->k. */
static void load_chunk(struct fr_window *w, struct fr_store_reader *r, const struct fr_window_query *q,
		       const struct fr_chunk_ref *ref, struct chunk_job *job, struct loader *t)
{
	w->cd[job->idx].buf = job->buf;
	/* lines are written from records decoded into the thread's own
	 * room, still in its cache, and not kept */
	if (job->lines && t->ents_cap < job->max) {
		size_t cap = MAX(job->max, t->ents_cap * 2);
		free(t->ents);
		t->ents = malloc(cap * sizeof(*t->ents));
		t->ents_cap = t->ents ? cap : 0;
		if (!t->ents) {
			job->k = -ENOMEM;
			return;
		}
	}
	if (job->lines)
		job->ents = t->ents;
	struct fr_record_iter it;

	job->k = fr_store_reader_load_into(r, t->dctx, ref, job->buf, &t->buf, &t->cap, &it);
	if (job->k == 0)
		job->k = decode_chunk(w, job->idx, ref, job, &it, q->since_ns, q->until_ns);
	if (job->k == 0 && job->lines)
		job->k = chunk_lines(w, q, job->idx, job, t->slot);
	if (job->lines)
		job->ents = NULL;
}

/* Takes chunks until none is left; @slot names the thread. */
static int load_chunks(struct load *l, unsigned slot)
{
	struct loader t = { .dctx = ZSTD_createDCtx(), .slot = slot };

	if (!t.dctx)
		return -ENOMEM;
	for (;;) {
		size_t i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED), done;

		if (i >= l->n)
			break;
		load_chunk(l->w, l->r, l->q, &l->refs[i], &l->jobs[i], &t);
		done = __atomic_add_fetch(&l->done, 1, __ATOMIC_RELAXED);
		if (slot == 0 && l->q->progress)
			l->q->progress(done, l->total, l->q->userdata);
	}
	loader_done(&t);
	return 0;
}

struct load_thread {
	struct load *l;
	unsigned slot;
};

static void *load_thread(void *userdata)
{
	struct load_thread *t = userdata;

	return (void *)(intptr_t)load_chunks(t->l, t->slot);
}

/* Chunks are independent: decompressing and decoding them is spread over
 * the CPUs; the calling thread takes its share (slot 0) and reports
 * progress. */
static int load_parallel(struct load *l)
{
	pthread_t threads[FR_WINDOW_THREADS_MAX];
	struct load_thread args[FR_WINDOW_THREADS_MAX];
	unsigned nthreads = 0;
	int k;

	while (nthreads + 1 < MIN(fr_window_threads(), l->n)) {
		args[nthreads] = (struct load_thread){ l, nthreads + 1 };
		if (pthread_create(&threads[nthreads], NULL, load_thread, &args[nthreads]) != 0)
			break;
		nthreads++;
	}
	k = load_chunks(l, 0);
	for (unsigned i = 0; i < nthreads; i++) {
		void *tk;
		pthread_join(threads[i], &tk);
		if (k == 0)
			k = (int)(intptr_t)tk;
	}
	return k;
}

unsigned fr_window_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > FR_WINDOW_THREADS_MAX ? FR_WINDOW_THREADS_MAX : (unsigned)n;
}

/* Drops the damaged chunks, and closes up the chunks' slices of items
 * into one array in store order (which ties in time keep). */
static int gather(struct load *l)
{
	struct fr_window *w = l->w;

	for (size_t i = 0; i < l->n; i++) {
		const struct chunk_job *job = &l->jobs[i];
		uint32_t idx = (uint32_t)w->nchunks;

		if (job->k == -EBADMSG) {
			w->chunks_damaged++;
			free(w->cd[i].cg);
			fr_symtab_done(&w->cd[i].symtab);
			w->cd[i] = (struct fr_window_chunk){};
			continue;
		}
		if (job->k < 0)
			return job->k;
		w->records_bad += job->bad;
		w->chunks[idx] = l->refs[i].info;
		if (idx != i) {
			w->cd[idx] = w->cd[i];
			w->cd[i] = (struct fr_window_chunk){};
		}
		w->nchunks++;
		memmove(w->items + w->n, w->items + job->first, job->n * sizeof(*w->items));
		for (size_t k = w->n; k < w->n + job->n; k++)
			w->items[k].chunk = idx;
		w->n += job->n;
	}
	return 0;
}

int fr_window_load(struct fr_store_reader *r, const struct fr_window_query *q,
		   struct fr_window **ret)
{
	struct fr_chunk_ref *refs = NULL;
	size_t n;
	int k = fr_window_select(r, q, &refs, &n);

	if (k < 0)
		return k;
	k = fr_window_load_refs(r, q, refs, n, ret);
	free(refs);
	return k;
}

int fr_window_load_refs(struct fr_store_reader *r, const struct fr_window_query *q, const struct fr_chunk_ref *refs,
			size_t n, struct fr_window **ret)
{
	struct load l = { .r = r, .q = q, .refs = refs, .n = n };
	size_t records = 0, raw = 0;
	struct fr_window *w;
	int k;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	l.w = w;
	w->store_fd = -EBADF;
	if (fr_store_reader_dir_fd(r) >= 0)
		w->store_fd = fcntl(fr_store_reader_dir_fd(r), F_DUPFD_CLOEXEC, 3);
	pthread_mutex_init(&w->ksyms_lock, NULL);
	/* per chunk: its header, payload, names and slice of the items, all
	 * sized once from the headers (an item per record at most) */
	l.jobs = calloc(l.n ? l.n : 1, sizeof(*l.jobs));
	w->chunks = calloc(l.n ? l.n : 1, sizeof(*w->chunks));
	w->cd = calloc(l.n ? l.n : 1, sizeof(*w->cd));
	w->ncd = l.n;
	if (!l.jobs || !w->chunks || !w->cd) {
		k = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < l.n; i++) {
		l.jobs[i] = (struct chunk_job){ .idx = (uint32_t)i, .first = records, .max = chunk_max_items(&refs[i]) };
		records += l.jobs[i].max;
		raw += refs[i].info.raw_size;
	}
	w->cap = records;
	w->items = fr_big_alloc(w->cap * sizeof(*w->items));
	w->payload_size = raw;
	w->payloads = fr_big_alloc(raw);
	if (!w->items || !w->payloads) {
		k = -ENOMEM;
		goto fail;
	}
	raw = 0;
	for (size_t i = 0; i < l.n; i++) {
		l.jobs[i].items = w->items + l.jobs[i].first;
		l.jobs[i].buf = w->payloads + raw;
		raw += refs[i].info.raw_size;
	}
	l.total = l.n;
	k = load_parallel(&l);
	if (k == 0)
		k = gather(&l);
	if (k == 0) {
		struct fr_window_item *scratch = NULL;
		k = fr_window_items_sort(&w->items, &scratch, w->n, w->cap);
		fr_big_free(scratch, w->cap * sizeof(*scratch));
	}
	if (k == 0 && !q->skip_exe)
		k = resolve_exe(w);
	if (k < 0)
		goto fail;
	free(l.jobs);
	*ret = w;
	return 0;
fail:
	free(l.jobs);
	fr_window_free(w);
	return k;
}

/*
 * Streaming: the window in slices of time, each loaded, handed out and
 * dropped in turn, so that printing a window touches a few megabytes
 * however long it is (a whole window of millions of records costs its
 * decoded payloads in fresh memory: on a VM, faulting that in took as long
 * as decompressing it).  Chunks are loaded in order of their first record;
 * once those up to some chunk are loaded, every record before that chunk's
 * first one is known, and those records are the next slice.
 */
struct stream_chunk {
	struct fr_window_item *items; /* its records not yet handed out */
	size_t n;
	struct spare buf, itembuf, entbuf, linebuf, offbuf; /* what it holds */
};

struct fr_window_stream {
	struct fr_store_reader *r;
	struct fr_window_query q;
	struct fr_chunk_ref *refs;
	uint32_t *order;       /* chunk indices by first record, then store order */
	struct chunk_job *jobs;/* jobs[i] loads chunk order[i] */
	size_t next;           /* order[next]: the next chunk to hand to the loaders */
	size_t merged;         /* jobs[0..merged) are done and in the open chunks */
	size_t batch_end[2];   /* the slices' worth handed out, oldest first */
	unsigned nbatches;
	struct stream_chunk *sc;
	uint32_t *open;        /* the loaded chunks, in store order */
	size_t nopen;
	struct spare *spares;  /* buffers of dropped chunks, for reuse */
	size_t nspares, sparecap;
	struct fr_pid_map pids;
	size_t exes_cap;
	struct fr_window_item *scratch; /* for sorting, as big as w->items */
	/* the loading threads: they take jobs[taken..limit) in turn */
	pthread_t threads[FR_WINDOW_THREADS_MAX];
	unsigned nthreads;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	size_t taken, limit;
	bool stop, started;
	struct loader self;    /* the calling thread's, when it helps */
	struct stream_worker {
		struct fr_window *w;
		unsigned slot;
	} workers[FR_WINDOW_THREADS_MAX];
};

/* Bytes of payload loaded per slice (at least one chunk), unless the
 * query says. */
#define STREAM_SLICE_BYTES (512u << 10)

static uint64_t ref_first(const struct fr_chunk_ref *ref)
{
	return ref->info.first_ts + (uint64_t)ref->info.realtime_offset;
}

static void *spare_take(struct fr_window_stream *s, size_t need, struct spare *ret)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < s->nspares; i++)
		if (s->spares[i].cap >= need && (best == SIZE_MAX || s->spares[i].cap < s->spares[best].cap))
			best = i;
	if (best != SIZE_MAX) {
		*ret = s->spares[best];
		s->spares[best] = s->spares[--s->nspares];
		return ret->p;
	}
	/* with room to spare, so that it fits the next chunks, which are
	 * much the same size but seldom exactly */
	need = ((need + need / 8) | 4095) + 1;
	*ret = (struct spare){ malloc(need), need };
	return ret->p;
}

static int spare_put(struct fr_window_stream *s, struct spare *sp)
{
	if (!sp->p)
		return 0;
	if (grow((void **)&s->spares, &s->sparecap, s->nspares + 1, sizeof(*s->spares)) < 0) {
		free(sp->p);
		*sp = (struct spare){};
		return -ENOMEM;
	}
	s->spares[s->nspares++] = *sp;
	*sp = (struct spare){};
	return 0;
}

static void stream_drop(struct fr_window *w, uint32_t idx)
{
	struct fr_window_stream *s = w->stream;
	struct stream_chunk *c = &s->sc[idx];

	free(w->cd[idx].cg);
	fr_symtab_done(&w->cd[idx].symtab);
	w->cd[idx] = (struct fr_window_chunk){};
	(void)spare_put(s, &c->buf);
	(void)spare_put(s, &c->itembuf);
	(void)spare_put(s, &c->entbuf);
	(void)spare_put(s, &c->linebuf);
	(void)spare_put(s, &c->offbuf);
	c->items = NULL;
	c->n = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_first(const void *a, const void *b, void *userdata)
{
	const struct fr_chunk_ref *refs = userdata;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t fx = ref_first(&refs[x]), fy = ref_first(&refs[y]);

	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int fr_window_stream_open(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_window **ret)
{
	struct fr_window_stream *s;
	struct fr_window *w;
	size_t n;
	int k;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->store_fd = -EBADF;
	if (fr_store_reader_dir_fd(r) >= 0)
		w->store_fd = fcntl(fr_store_reader_dir_fd(r), F_DUPFD_CLOEXEC, 3);
	pthread_mutex_init(&w->ksyms_lock, NULL);
	s = w->stream = calloc(1, sizeof(*s));
	if (!s) {
		fr_window_free(w);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->done, NULL);
	s->r = r;
	s->q = *q;
	k = fr_window_select(r, q, &s->refs, &n);
	if (k < 0) {
		fr_window_free(w);
		return k;
	}
	w->chunks = calloc(n ? n : 1, sizeof(*w->chunks));
	w->cd = calloc(n ? n : 1, sizeof(*w->cd));
	s->sc = calloc(n ? n : 1, sizeof(*s->sc));
	s->order = calloc(n ? n : 1, sizeof(*s->order));
	s->open = calloc(n ? n : 1, sizeof(*s->open));
	s->jobs = calloc(n ? n : 1, sizeof(*s->jobs));
	if (!w->chunks || !w->cd || !s->sc || !s->order || !s->open || !s->jobs) {
		fr_window_free(w);
		return -ENOMEM;
	}
	w->nchunks = w->ncd = n;
	for (size_t i = 0; i < n; i++) {
		w->chunks[i] = s->refs[i].info;
		s->order[i] = (uint32_t)i;
	}
	qsort_r(s->order, n, sizeof(*s->order), cmp_first, s->refs);
	*ret = w;
	return 0;
}

/* Job @i, by a loading thread. */
static void stream_job(struct fr_window *w, size_t i, struct loader *t)
{
	struct fr_window_stream *s = w->stream;

	load_chunk(w, s->r, &s->q, &s->refs[s->order[i]], &s->jobs[i], t);
}

/* A loading thread: takes the chunks handed out, in order, as long as
 * there are; they run ahead of the printing by up to two slices. */
static void *stream_worker(void *userdata)
{
	struct stream_worker *sw = userdata;
	struct fr_window_stream *s = sw->w->stream;
	struct loader t = { .dctx = ZSTD_createDCtx(), .slot = sw->slot };

	pthread_mutex_lock(&s->lock);
	while (t.dctx) {
		while (!s->stop && s->taken == s->limit)
			pthread_cond_wait(&s->work, &s->lock);
		if (s->stop)
			break;
		size_t i = s->taken++;
		pthread_mutex_unlock(&s->lock);
		stream_job(sw->w, i, &t);
		pthread_mutex_lock(&s->lock);
		s->jobs[i].done = true;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	loader_done(&t);
	return NULL;
}

/* Hands the loading threads the next chunks in order of their first
 * record: STREAM_SLICE_BYTES of payload (one chunk at least), with the
 * buffers they load into. */
static int stream_schedule(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t bytes = 0, slice = s->q.slice_bytes ? s->q.slice_bytes : STREAM_SLICE_BYTES;
	int k = 0;

	while (s->next < w->ncd && (bytes == 0 || bytes < slice)) {
		uint32_t idx = s->order[s->next];
		struct stream_chunk *c = &s->sc[idx];
		size_t max = chunk_max_items(&s->refs[idx]);
		struct chunk_job *job = &s->jobs[s->next];
		/* the records decoded, kept unless only their lines are needed */
		bool rows = !(s->q.line && s->q.lines_only && s->q.skip_exe);

		*job = (struct chunk_job){ .idx = idx, .max = max,
			.buf = rows ? spare_take(s, s->refs[idx].info.raw_size, &c->buf) : NULL,
			.items = spare_take(s, max * sizeof(struct fr_window_item), &c->itembuf) };
		s->next++;
		if ((rows && !job->buf) || !job->items)
			k = -ENOMEM;
		if (s->q.line) {
			/* the lines (text takes about twice its payload; it
			 * grows if not), their offsets and the records' */
			job->lines = &c->linebuf;
			job->line_off = spare_take(s, (2 * max + 1) * sizeof(uint32_t), &c->offbuf);
			job->rec_off = job->line_off && rows ? job->line_off + max + 1 : NULL;
			if (!job->line_off || !spare_take(s, s->refs[idx].info.raw_size * 2, &c->linebuf))
				k = -ENOMEM;
		} else if (!(job->ents = spare_take(s, max * sizeof(struct fr_window_entry), &c->entbuf)))
			k = -ENOMEM;
		if (k < 0) {
			job->k = k;
			job->done = true;
			break;
		}
		w->cd[idx].ents = job->ents;
		w->cd[idx].rec_off = job->rec_off;
		bytes += s->refs[idx].info.raw_size;
	}
	s->batch_end[s->nbatches++] = s->next;
	pthread_mutex_lock(&s->lock);
	/* a job that failed here is done already: the threads skip it */
	s->limit = k < 0 ? s->next - 1 : s->next;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	return k;
}

static int stream_start(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	unsigned n = fr_window_threads();

	s->self = (struct loader){ .dctx = ZSTD_createDCtx(), .slot = n };
	if (!s->self.dctx)
		return -ENOMEM;
	for (unsigned t = 0; t < n; t++) {
		s->workers[t] = (struct stream_worker){ w, t };
		if (pthread_create(&s->threads[s->nthreads], NULL, stream_worker, &s->workers[t]) == 0)
			s->nthreads++;
	}
	s->started = true;
	return 0;
}

/* Waits for the oldest slice's worth of chunks, helping with them while
 * some are not taken yet; their records join the open chunks'. */
static int stream_merge(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t end = s->batch_end[0];
	int k = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = s->merged; i < end; i++)
		while (!s->jobs[i].done) {
			if (s->taken < end && s->taken < s->limit) {
				size_t j = s->taken++;
				pthread_mutex_unlock(&s->lock);
				stream_job(w, j, &s->self);
				pthread_mutex_lock(&s->lock);
				s->jobs[j].done = true;
			} else
				pthread_cond_wait(&s->done, &s->lock);
		}
	pthread_mutex_unlock(&s->lock);
	for (size_t i = s->merged; i < end; i++) {
		const struct chunk_job *job = &s->jobs[i];
		struct stream_chunk *c = &s->sc[job->idx];

		s->open[s->nopen++] = job->idx;
		if (job->k == -EBADMSG) {
			w->chunks_damaged++;
			continue; /* no items: dropped with the drained */
		}
		if (job->k < 0 && k == 0)
			k = job->k;
		w->records_bad += job->bad;
		c->items = job->items;
		c->n = job->n;
	}
	s->merged = end;
	s->batch_end[0] = s->batch_end[1];
	s->nbatches--;
	if (s->q.progress)
		s->q.progress(s->merged, w->ncd, s->q.userdata);
	/* ties in time go in store order */
	qsort(s->open, s->nopen, sizeof(*s->open), cmp_u32);
	return k;
}

int fr_window_stream_next(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;
	size_t need = 0, kept = 0;
	uint64_t until;
	int k;

	if (!s)
		return -EINVAL;
	/* the first slice: the loaders start on two slices' worth */
	if (!s->started) {
		if ((k = stream_start(w)) < 0)
			return k;
		for (int b = 0; b < 2 && s->next < w->ncd; b++)
			if ((k = stream_schedule(w)) < 0)
				return k;
	}
	if (s->nbatches && (k = stream_merge(w)) < 0)
		return k;
	/* what the last slice handed out is done with */
	for (size_t i = 0; i < s->nopen; i++) {
		if (s->sc[s->open[i]].n == 0)
			stream_drop(w, s->open[i]);
		else
			s->open[kept++] = s->open[i];
	}
	s->nopen = kept;
	w->n = 0;
	if (s->merged == w->ncd && s->nopen == 0)
		return 0;
	/* no chunk not merged yet has a record before its first one */
	until = s->merged < w->ncd ? ref_first(&s->refs[s->order[s->merged]]) : UINT64_MAX;
	for (size_t i = 0; i < s->nopen; i++)
		need += s->sc[s->open[i]].n;
	if (need > w->cap) {
		/* room to spare: the next slices are much the same size */
		size_t cap = need + need / 2;
		struct fr_window_item *items = fr_big_alloc(cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		fr_big_free(w->items, w->cap * sizeof(*w->items));
		fr_big_free(s->scratch, w->cap * sizeof(*s->scratch));
		s->scratch = NULL;
		w->items = items;
		w->cap = cap;
	}
	for (size_t i = 0; i < s->nopen; i++) {
		struct stream_chunk *c = &s->sc[s->open[i]];
		size_t left = 0;

		for (size_t j = 0; j < c->n; j++) {
			if (c->items[j].wall_ns < until || until == UINT64_MAX)
				w->items[w->n++] = c->items[j];
			else
				c->items[left++] = c->items[j];
		}
		c->n = left;
	}
	k = fr_window_items_sort(&w->items, &s->scratch, w->n, w->cap);
	if (k == 0 && !s->q.skip_exe)
		k = resolve_exe_items(w, &s->pids, &s->exes_cap, true);
	/* the loaders go on, a slice ahead of the one being printed */
	if (k == 0 && s->next < w->ncd && s->nbatches < 2)
		k = stream_schedule(w);
	return k < 0 ? k : 1;
}

static void stream_free(struct fr_window *w)
{
	struct fr_window_stream *s = w->stream;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	for (unsigned t = 0; t < s->nthreads; t++)
		pthread_join(s->threads[t], NULL);
	loader_done(&s->self);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->done);
	for (size_t i = 0; s->sc && i < w->ncd; i++) {
		free(s->sc[i].buf.p);
		free(s->sc[i].itembuf.p);
		free(s->sc[i].entbuf.p);
		free(s->sc[i].linebuf.p);
		free(s->sc[i].offbuf.p);
	}
	for (size_t i = 0; i < s->nspares; i++)
		free(s->spares[i].p);
	for (size_t i = 0; i < w->nexes; i++)
		free((void *)w->exes[i].p);
	fr_pid_map_done(&s->pids);
	fr_big_free(s->scratch, w->cap * sizeof(*s->scratch));
	free(s->spares);
	free(s->sc);
	free(s->order);
	free(s->open);
	free(s->jobs);
	free(s->refs);
	free(s);
	w->stream = NULL;
}


struct fr_window *fr_window_free(struct fr_window *w)
{
	if (!w)
		return NULL;
	stream_free(w);
	/* all, not nchunks: a load that failed leaves tables anywhere */
	for (size_t i = 0; w->cd && i < w->ncd; i++) {
		free(w->cd[i].cg);
		fr_symtab_done(&w->cd[i].symtab);
	}
	free(w->cd);
	free(w->chunks);
	free(w->exes);
	for (size_t i = 0; i < w->nksyms; i++)
		fr_ksyms_free(w->ksyms[i].k);
	free(w->ksyms);
	closep(&w->store_fd);
	pthread_mutex_destroy(&w->ksyms_lock);
	fr_big_free(w->items, w->cap * sizeof(*w->items));
	fr_big_free(w->payloads, w->payload_size);
	free(w);
	return NULL;
}

/* The store's kernel symbol snapshot of @boot_id, loaded once (under the
 * lock: threads print in parallel). */
static const struct fr_ksyms *window_ksyms(struct fr_window *w, const uint8_t boot_id[16])
{
	struct fr_window_ksyms *v;
	const struct fr_ksyms *k = NULL;
	char id[33];

	if (w->store_fd < 0)
		return NULL;
	pthread_mutex_lock(&w->ksyms_lock);
	for (size_t i = 0; i < w->nksyms; i++)
		if (memcmp(w->ksyms[i].boot_id, boot_id, 16) == 0) {
			k = w->ksyms[i].k;
			goto out;
		}
	v = realloc(w->ksyms, (w->nksyms + 1) * sizeof(*v));
	if (!v)
		goto out;
	w->ksyms = v;
	v = &w->ksyms[w->nksyms++];
	memcpy(v->boot_id, boot_id, 16);
	v->k = NULL;
	(void)fr_ksyms_load_snapshot(w->store_fd, fr_format_boot_id(boot_id, id, sizeof(id)), &v->k);
	k = v->k;
out:
	pthread_mutex_unlock(&w->ksyms_lock);
	return k;
}

void fr_window_set_late_names(struct fr_window *w, struct fr_late_names *ln)
{
	w->late_names = ln;
}

int fr_window_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
		     size_t max)
{
	uint64_t addr[FR_SAMPLE_FRAMES_MAX];
	const struct fr_symtab *t = e->chunk < w->nchunks ? &w->cd[e->chunk].symtab : NULL;
	const struct fr_ksyms *ks = NULL;
	int n = fr_record_frames(&e->r, addr, FR_SAMPLE_FRAMES_MAX);
	size_t k = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && k < max; i++) {
		struct fr_frame f;

		fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &f);
		/* a kernel frame the chunk did not name: try the snapshot */
		if (f.kernel && !f.sym && !ks && t) {
			ks = window_ksyms(w, w->chunks[e->chunk].boot_id);
			if (ks)
				fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &f);
		}
		/* the functions inlined where a user frame is are called
		 * from it, as it were: leaf side of it, innermost first */
		if (!f.kernel) {
			size_t m = fr_symtab_inlined(t, &e->r, (unsigned)i, &f, out + k, max - k);

			/* one the chunk did not name: its build's debug file
			 * may be here (names, and inlined functions) */
			if (!m && !f.sym && w->late_names)
				m = fr_late_names_resolve(w->late_names, &f, i == 0, out + k, max - k);
			k += m;
		}
		if (k < max)
			out[k++] = f;
	}
	return (int)k;
}

unsigned fr_window_ncpu(const struct fr_window *w)
{
	unsigned n = 0;

	for (size_t i = 0; i < w->nchunks; i++)
		if (w->chunks[i].cpu != FR_CPU_META && w->chunks[i].cpu < 4096)
			n = MAX(n, w->chunks[i].cpu + 1);
	return n;
}

/*
 * Executables by pid across windows read one after another: the same
 * rules as a window's own (resolve_exe_items()), but each name copied, so
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
