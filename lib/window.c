/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

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

static int cmp_entry(const void *a, const void *b)
{
	const struct fr_window_entry *x = a, *y = b;

	if (x->wall_ns != y->wall_ns)
		return x->wall_ns < y->wall_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Cgroup descriptions are per chunk: at most this many are remembered. */
#define CGROUPS_PER_CHUNK 256

static int decode_chunk(struct fr_window *w, const struct fr_chunk_ref *ref, const uint8_t *raw,
			uint64_t since, uint64_t until, uint64_t *order)
{
	struct { uint64_t id; const char *path; uint32_t len; } cg[CGROUPS_PER_CHUNK];
	struct fr_codec_state st = {};
	unsigned ncg = 0;
	size_t pos = 0;
	uint32_t idx = (uint32_t)w->nchunks - 1;

	for (uint32_t i = 0; i < ref->info.nrecords; i++) {
		struct fr_window_entry *e;
		struct fr_record rec;

		if (fr_record_decode(&st, raw, ref->info.raw_size, &pos, &rec) < 0) {
			w->records_bad += ref->info.nrecords - i;
			break;
		}
		rec.cpu = ref->info.cpu;
		if (rec.type == FR_REC_MAPPING || rec.type == FR_REC_SYMBOL) {
			if (fr_symtab_add(&w->symtabs[idx], &rec) < 0)
				return -ENOMEM;
			continue;
		}
		if (rec.type == FR_REC_CGROUP) {
			/* a ring: the writer repeats descriptions in chunks with
			 * many cgroups, and the newest is what later records use */
			cg[ncg++ % CGROUPS_PER_CHUNK] = (typeof(cg[0])){ rec.cgroup_id, rec.cgroup.path, rec.cgroup.path_len };
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
		if (grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)) < 0)
			return -ENOMEM;
		e = &w->v[w->n++];
		*e = (struct fr_window_entry){ .r = rec, .wall_ns = wall, .chunk = idx,
					       .order = (*order)++, .hidden = hidden };
		for (unsigned k = 0; k < MIN(ncg, CGROUPS_PER_CHUNK); k++)
			if (cg[k].id == rec.cgroup_id) {
				e->cgroup = cg[k].path;
				e->cgroup_len = cg[k].len;
				break;
			}
	}
	fr_symtab_finish(&w->symtabs[idx]);
	return 0;
}

struct exe_ref {
	const char *p;
	uint32_t len;
	bool kernel_thread;
};

/* In time order: keyframes and execs say what a pid runs, forks pass it to
 * the child; every entry gets its pid's exe as of its time. */
static int resolve_exe(struct fr_window *w)
{
	struct exe_ref *refs = calloc(w->n ? w->n : 1, sizeof(*refs));
	struct fr_pid_map map = {};
	int k = 0;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < w->n && k == 0; i++) {
		struct fr_window_entry *e = &w->v[i];
		const struct fr_record *r = &e->r;
		struct exe_ref *cur = fr_pid_map_get(&map, r->pid);

		if (r->type == FR_REC_PROCESS) {
			/* an empty exe in a keyframe is a kernel thread */
			refs[i] = (struct exe_ref){ r->process.exe, r->process.exe_len, r->process.exe_len == 0 };
			k = fr_pid_map_put(&map, r->pid, &refs[i], NULL);
		} else if (r->type == FR_REC_EXEC) {
			refs[i] = (struct exe_ref){ r->exec.filename, r->exec.filename_len };
			k = fr_pid_map_put(&map, r->pid, &refs[i], NULL);
		} else if (r->type == FR_REC_FORK && cur)
			k = fr_pid_map_put(&map, r->fork.child_pid, cur, NULL);
		cur = fr_pid_map_get(&map, r->pid);
		if (cur && r->pid) {
			e->kernel_thread = cur->kernel_thread;
			if (!cur->kernel_thread) {
				e->exe = cur->p;
				e->exe_len = cur->len;
			}
		}
	}
	fr_pid_map_done(&map);
	if (k == 0) {
		w->exe_refs = refs;
		return 0;
	}
	free(refs);
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
	uint64_t since_ns = q->since_ns, until_ns = q->until_ns;
	struct { struct fr_chunk_ref *refs; size_t n; } c = {};
	struct fr_window *w;
	uint64_t order = 0;
	size_t records = 0;
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
	/* per loaded chunk: its buffer, header and code; all sized once, as
	 * are the entries (from the headers' record counts) */
	for (size_t i = 0; i < c.n; i++) /* a record takes 7 bytes at least */
		records += MIN(c.refs[i].info.nrecords, c.refs[i].info.raw_size / 7);
	w->bufs = calloc(c.n ? c.n : 1, sizeof(*w->bufs));
	w->chunks = calloc(c.n ? c.n : 1, sizeof(*w->chunks));
	w->symtabs = calloc(c.n ? c.n : 1, sizeof(*w->symtabs));
	if (!w->bufs || !w->chunks || !w->symtabs || grow((void **)&w->v, &w->cap, records, sizeof(*w->v)) < 0) {
		k = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c.n; i++) {
		uint8_t *raw = NULL;

		k = fr_store_reader_load(r, &c.refs[i], &raw);
		if (k == -EBADMSG) {
			w->chunks_damaged++;
			continue;
		}
		if (k < 0)
			goto fail;
		w->bufs[w->nchunks] = raw;
		w->chunks[w->nchunks++] = c.refs[i].info;
		k = decode_chunk(w, &c.refs[i], raw, since_ns, until_ns, &order);
		if (k < 0)
			goto fail;
		if (q->progress)
			q->progress(i + 1, c.n, q->userdata);
	}
	free(c.refs);
	if (w->n > 1)
		qsort(w->v, w->n, sizeof(*w->v), cmp_entry);
	k = resolve_exe(w);
	if (k < 0) {
		fr_window_free(w);
		return k;
	}
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
	for (size_t i = 0; i < w->nchunks; i++)
		free(w->bufs[i]);
	free(w->bufs);
	free(w->chunks);
	free(w->exe_refs);
	for (size_t i = 0; i < w->nchunks; i++)
		fr_symtab_done(&w->symtabs[i]);
	free(w->symtabs);
	for (size_t i = 0; i < w->nksyms; i++)
		fr_ksyms_free(w->ksyms[i].k);
	free(w->ksyms);
	closep(&w->store_fd);
	free(w->v);
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
	const struct fr_symtab *t = e->chunk < w->nchunks ? &w->symtabs[e->chunk] : NULL;
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
