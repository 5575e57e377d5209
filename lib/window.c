/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

#include "big-alloc.h"
#include "ksyms.h"
#include "macro.h"
#include "record-fields.h"
#include "pid-map.h"
#include "store-format.h"
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

struct fr_window_chunk {
	uint8_t *buf;            /* the decoded payload */
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

/* The first pass over a loaded chunk: names go into its tables, and each
 * record of the window (or context for it) becomes an item. */
static int decode_chunk(struct fr_window *w, const struct fr_chunk_ref *ref, uint64_t since, uint64_t until)
{
	uint32_t idx = (uint32_t)w->nchunks - 1;
	struct fr_window_chunk *c = &w->cd[idx];
	struct fr_codec_state st = {};
	size_t pos = 0;

	for (uint32_t i = 0; i < ref->info.nrecords; i++) {
		size_t start = pos;
		struct fr_record rec;

		if (fr_record_decode(&st, c->buf, ref->info.raw_size, &pos, &rec) < 0) {
			w->records_bad += ref->info.nrecords - i;
			break;
		}
		if (rec.type == FR_REC_MAPPING || rec.type == FR_REC_SYMBOL) {
			if (fr_symtab_add(&c->symtab, &rec) < 0)
				return -ENOMEM;
			continue;
		}
		if (rec.type == FR_REC_CGROUP) {
			if (grow((void **)&c->cg, &c->cgcap, c->ncg + 1, sizeof(*c->cg)) < 0)
				return -ENOMEM;
			c->cg[c->ncg] = (struct cgroup_desc){ rec.cgroup_id, rec.cgroup.path, rec.cgroup.path_len,
							      (uint32_t)c->ncg };
			c->ncg++;
			continue;
		}
		uint64_t wall = rec.ts + (uint64_t)ref->info.realtime_offset;
		bool hidden = false;
		/* keyframe records, and exec/fork records before the window,
		 * are kept as context: they name the window's processes */
		if (rec.type == FR_REC_PROCESS)
			hidden = true;
		else if (wall > until)
			continue;
		else if (wall < since) {
			if (rec.type != FR_REC_EXEC && rec.type != FR_REC_FORK)
				continue;
			hidden = true;
		}
		if (w->n == w->cap) /* cannot be: cap counts the chunks' records */
			return -EBADMSG;
		w->items[w->n++] = (struct fr_window_item){ .wall_ns = wall, .chunk = idx, .pos = (uint32_t)start,
							    .pid = rec.pid, .type = rec.type, .hidden = hidden };
	}
	cgroups_finish(c);
	fr_symtab_finish(&c->symtab);
	return 0;
}

/* Stable LSD radix sort of the items by wall time, RADIX_BITS at a time
 * over the bits the window's span needs: a few linear passes instead of
 * a comparison sort (the window is per-CPU runs, interleaved). */
#define RADIX_BITS 11
static int sort_items(struct fr_window *w)
{
	struct fr_window_item *a = w->items, *b;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned passes;
	bool sorted = true;

	for (size_t i = 0; i < w->n; i++) {
		lo = MIN(lo, a[i].wall_ns);
		hi = MAX(hi, a[i].wall_ns);
		if (i && a[i].wall_ns < a[i - 1].wall_ns)
			sorted = false;
	}
	if (sorted)
		return 0;
	passes = (64 - (unsigned)__builtin_clzll(hi - lo) + RADIX_BITS - 1) / RADIX_BITS;
	b = fr_big_alloc(w->cap * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (unsigned p = 0; p < passes; p++) {
		size_t count[1u << RADIX_BITS] = {};
		unsigned shift = p * RADIX_BITS;
		size_t sum = 0;

		for (size_t i = 0; i < w->n; i++)
			count[((a[i].wall_ns - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < ELEMENTSOF(count); d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < w->n; i++)
			b[count[((a[i].wall_ns - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++] = a[i];
		struct fr_window_item *t = a;
		a = b;
		b = t;
	}
	fr_big_free(b, w->cap * sizeof(*b)); /* after an odd number of passes, the first array */
	w->items = a;
	return 0;
}

/* Decodes item @it (the same bytes decoded when the window loaded). */
static int item_decode(const struct fr_window *w, const struct fr_window_item *it, struct fr_record *r)
{
	const struct fr_chunk_info *ci = &w->chunks[it->chunk];
	struct fr_codec_state st = {};
	size_t pos = it->pos;
	int k = fr_record_decode(&st, w->cd[it->chunk].buf, ci->raw_size, &pos, r);

	/* the time is delta-coded: it comes from the item */
	r->ts = it->wall_ns - (uint64_t)ci->realtime_offset;
	r->cpu = ci->cpu;
	return k;
}

/* In time order: keyframes and execs say what a pid runs, forks pass it to
 * the child; every item gets its pid's exe as of its time. */
static int resolve_exe(struct fr_window *w)
{
	struct fr_pid_map map = {};
	size_t cap = 0;
	int k = 0;

	for (size_t i = 0; i < w->n && k == 0; i++) {
		struct fr_window_item *it = &w->items[i];
		struct fr_record r;

		if (it->type == FR_REC_PROCESS || it->type == FR_REC_EXEC || it->type == FR_REC_FORK) {
			if (item_decode(w, it, &r) < 0)
				continue;
			if (it->type == FR_REC_FORK) {
				void *cur = fr_pid_map_get(&map, r.pid);
				if (cur)
					k = fr_pid_map_put(&map, r.fork.child_pid, cur, NULL);
			} else if (grow((void **)&w->exes, &cap, w->nexes + 1, sizeof(*w->exes)) < 0) {
				k = -ENOMEM;
			} else {
				/* an empty exe in a keyframe is a kernel thread */
				w->exes[w->nexes++] = it->type == FR_REC_PROCESS ?
					(struct fr_window_exe){ r.process.exe, r.process.exe_len, r.process.exe_len == 0 } :
					(struct fr_window_exe){ r.exec.filename, r.exec.filename_len, false };
				k = fr_pid_map_put(&map, r.pid, (void *)(uintptr_t)w->nexes, NULL);
			}
		}
		if (it->pid)
			it->exe = (uint32_t)(uintptr_t)fr_pid_map_get(&map, it->pid);
	}
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

int fr_window_select(struct fr_store_reader *r, const struct fr_window_query *q, struct fr_chunk_ref **ret,
		     size_t *nret)
{
	struct collect c = { .since = q->since_ns, .until = q->until_ns, .q = q };
	int k = fr_store_reader_foreach(r, collect_cb, &c);

	if (k < 0)
		goto fail;
	/* without a keyframe before the window there is nothing to anchor
	 * the context chunks to: the window names what it can */
	if (!c.nkf)
		c.npre = 0;
	prune_pre(&c);
	for (size_t i = 0; i < c.nkf + c.npre; i++) {
		if (grow((void **)&c.refs, &c.cap, c.n + 1, sizeof(*c.refs)) < 0) {
			k = -ENOMEM;
			goto fail;
		}
		c.refs[c.n++] = i < c.nkf ? c.kf[i] : c.pre[i - c.nkf];
	}
	free(c.kf);
	free(c.pre);
	*ret = c.refs;
	*nret = c.n;
	return 0;
fail:
	free(c.refs);
	free(c.kf);
	free(c.pre);
	return k;
}

int fr_window_load(struct fr_store_reader *r, const struct fr_window_query *q,
		   struct fr_window **ret)
{
	struct { struct fr_chunk_ref *refs; size_t n; } c = {};
	struct fr_window *w;
	size_t records = 0, raw = 0;
	int k;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->store_fd = -EBADF;
	if (fr_store_reader_dir_fd(r) >= 0)
		w->store_fd = fcntl(fr_store_reader_dir_fd(r), F_DUPFD_CLOEXEC, 3);
	k = fr_window_select(r, q, &c.refs, &c.n);
	if (k < 0)
		goto fail;
	/* per loaded chunk: its header, payload and names; all sized once
	 * from the headers, as are the items (one per record at most) */
	for (size_t i = 0; i < c.n; i++) { /* a record takes 7 bytes at least */
		records += MIN(c.refs[i].info.nrecords, c.refs[i].info.raw_size / 7);
		raw += c.refs[i].info.raw_size;
	}
	w->chunks = calloc(c.n ? c.n : 1, sizeof(*w->chunks));
	w->cd = calloc(c.n ? c.n : 1, sizeof(*w->cd));
	w->cap = records;
	w->items = fr_big_alloc(w->cap * sizeof(*w->items));
	w->payload_size = raw;
	w->payloads = fr_big_alloc(raw);
	if (!w->chunks || !w->cd || !w->items || !w->payloads) {
		k = -ENOMEM;
		goto fail;
	}
	raw = 0;
	for (size_t i = 0; i < c.n; i++) {
		uint8_t *buf = w->payloads + raw;

		k = fr_store_reader_load(r, &c.refs[i], buf);
		if (k == -EBADMSG) {
			w->chunks_damaged++;
			continue;
		}
		if (k < 0)
			goto fail;
		raw += c.refs[i].info.raw_size;
		w->cd[w->nchunks].buf = buf;
		w->chunks[w->nchunks++] = c.refs[i].info;
		k = decode_chunk(w, &c.refs[i], q->since_ns, q->until_ns);
		if (k < 0)
			goto fail;
		if (q->progress)
			q->progress(i + 1, c.n, q->userdata);
	}
	free(c.refs);
	c.refs = NULL;
	k = sort_items(w);
	if (k == 0)
		k = resolve_exe(w);
	if (k < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	free(c.refs);
	fr_window_free(w);
	return k;
}

struct fr_window *fr_window_free(struct fr_window *w)
{
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->nchunks; i++) {
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
	fr_big_free(w->items, w->cap * sizeof(*w->items));
	fr_big_free(w->payloads, w->payload_size);
	free(w);
	return NULL;
}

/* The store's kernel symbol snapshot of @boot_id, loaded once. */
static const struct fr_ksyms *window_ksyms(struct fr_window *w, const uint8_t boot_id[16])
{
	struct fr_window_ksyms *v;
	char id[33];

	if (w->store_fd < 0)
		return NULL;
	for (size_t i = 0; i < w->nksyms; i++)
		if (memcmp(w->ksyms[i].boot_id, boot_id, 16) == 0)
			return w->ksyms[i].k;
	v = realloc(w->ksyms, (w->nksyms + 1) * sizeof(*v));
	if (!v)
		return NULL;
	w->ksyms = v;
	v = &w->ksyms[w->nksyms++];
	memcpy(v->boot_id, boot_id, 16);
	v->k = NULL;
	(void)fr_ksyms_load_snapshot(w->store_fd, fr_format_boot_id(boot_id, id, sizeof(id)), &v->k);
	return v->k;
}

int fr_window_frames(struct fr_window *w, const struct fr_window_entry *e, struct fr_frame *out,
		     size_t max)
{
	uint64_t addr[FR_SAMPLE_FRAMES_MAX];
	const struct fr_symtab *t = e->chunk < w->nchunks ? &w->cd[e->chunk].symtab : NULL;
	const struct fr_ksyms *ks = NULL;
	int n = fr_sample_frames(&e->r, addr, FR_SAMPLE_FRAMES_MAX);

	if (n < 0)
		return n;
	if ((size_t)n > max)
		n = (int)max;
	for (int i = 0; i < n; i++) {
		fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &out[i]);
		/* a kernel frame the chunk did not name: try the snapshot */
		if (out[i].kernel && !out[i].sym && !ks && t) {
			ks = window_ksyms(w, w->chunks[e->chunk].boot_id);
			if (ks)
				fr_symtab_resolve(t, ks, &e->r, (unsigned)i, addr[i], &out[i]);
		}
	}
	return n;
}

unsigned fr_window_ncpu(const struct fr_window *w)
{
	unsigned n = 0;

	for (size_t i = 0; i < w->nchunks; i++)
		if (w->chunks[i].cpu != FR_CPU_META && w->chunks[i].cpu < 4096)
			n = MAX(n, w->chunks[i].cpu + 1);
	return n;
}
