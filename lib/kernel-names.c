/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel names an incident carries (kernel-names.h).  Collecting: each
 * chunk copied is decoded; the lookup addresses of its samples' kernel
 * frames go into a set for the chunk, and when it is read to its end
 * (descriptions may come after the samples they describe) those its own
 * pid 0 symbols do not cover go into the set of its boot (chunks of a
 * boot without snapshot are not decoded: nothing would name them).  They
 * are looked up in the boot's snapshot when the caller asks
 * (fr_kernel_names_collector_resolve()) and at the end, which makes a
 * chunk of the functions found, once each.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "boots.h"
#include "chunk.h"
#include "kernel-names.h"
#include "ksyms.h"
#include "macro.h"
#include "record-fields.h"

/* Records decoded at once (7 KiB of them, on the stack). */
#define DECODE_BATCH 64

/* Records of a names chunk, before the next one: a chunk of ~1 MiB. */
#define NAMES_RAW_MAX (1u << 20)

/* A set of addresses, open addressing; a slot is taken when its gen is
 * the set's, so emptying it is one increment.  @list: the members, in
 * order of insertion. */
struct addr_slot {
	uint64_t addr;
	uint32_t gen;
};

struct addr_set {
	struct addr_slot *slot;
	uint64_t *list;
	size_t cap, n; /* cap: slots, a power of two (or 0); n: members */
	uint32_t gen;
};

struct boot_names {
	uint8_t boot_id[16];
	struct addr_set addrs; /* not covered by their chunks */
	bool carried;          /* a names chunk of it was copied */
	/* the copied chunks' span (wall ns), and the clock offsets of the
	 * last one, which the names chunk takes */
	uint64_t first_wall, last_wall;
	int64_t realtime_offset, monotonic_offset;
	/* its snapshot (NULL: none, once loaded); addrs.list[0..resolved)
	 * looked up in it, their functions in found */
	bool loaded;
	struct fr_ksyms *ks;
	bool ks_lent; /* the caller's (fr_kernel_names_collector_lend_ksyms()) */
	size_t resolved;
	const struct fr_ksym **found;
	size_t nfound, foundcap;
};
_Static_assert(offsetof(struct boot_names, boot_id) == 0, "fr_boot_slot()");

struct range {
	uint64_t start, end;
};

struct fr_kernel_names_collector {
	int dir_fd;
	bool store_set;
	/* a boot's table lent by the caller, in place of loading its snapshot */
	const struct fr_ksyms *lent;
	uint8_t lent_boot[16];
	struct boot_names *boots;
	size_t nboots;
	uint64_t seqnum_max;
	size_t naddrs; /* in all boots' sets, against FR_KERNEL_NAMES_ADDRS_MAX */
	struct fr_kernel_names_stats st;
	/* one chunk's: its kernel addresses, and the pid 0 symbols it has */
	struct addr_set chunk;
	struct range *ranges;
	size_t nranges, rangecap;
	ZSTD_DCtx *dctx;
	uint8_t *content;
	size_t content_cap;
	/* names chunks built ahead (fr_kernel_names_collector_prepare()) for
	 * one boot, when it had @prepared_naddrs addresses and began at
	 * @prepared_first (wall ns); the symbols in them */
	uint8_t *prepared;
	size_t prepared_len, prepared_naddrs;
	uint64_t prepared_first, prepared_symbols;
};

static void set_done(struct addr_set *s)
{
	free(s->slot);
	free(s->list);
	*s = (struct addr_set){};
}

static void set_clear(struct addr_set *s)
{
	s->n = 0;
	if (++s->gen == 0) {
		memset(s->slot, 0, s->cap * sizeof(*s->slot));
		s->gen = 1;
	}
}

static struct addr_slot *set_slot(const struct addr_set *s, uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 32) & (s->cap - 1);

	while (s->slot[i].gen == s->gen && s->slot[i].addr != addr)
		i = (i + 1) & (s->cap - 1);
	return &s->slot[i];
}

/* 1: added, 0: there already, -ENOSPC: @max members already. */
static int set_add(struct addr_set *s, uint64_t addr, size_t max)
{
	struct addr_slot *sl;

	if (s->cap && (sl = set_slot(s, addr))->gen == s->gen)
		return 0;
	if (s->n >= max)
		return -ENOSPC;
	/* at most half full: probes stay short */
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct addr_slot *v = calloc(cap, sizeof(*v));
		uint64_t *l = realloc(s->list, cap / 2 * sizeof(*l));
		if (!v || !l) {
			free(v);
			if (l)
				s->list = l;
			return -ENOMEM;
		}
		free(s->slot);
		s->slot = v;
		s->list = l;
		s->cap = cap;
		s->gen = 1;
		for (size_t i = 0; i < s->n; i++)
			*set_slot(s, s->list[i]) = (struct addr_slot){ s->list[i], s->gen };
	}
	*set_slot(s, addr) = (struct addr_slot){ addr, s->gen };
	s->list[s->n++] = addr;
	return 1;
}

static void boots_free(struct fr_kernel_names_collector *c)
{
	for (size_t i = 0; i < c->nboots; i++) {
		set_done(&c->boots[i].addrs);
		if (!c->boots[i].ks_lent)
			fr_ksyms_free(c->boots[i].ks);
		free(c->boots[i].found);
	}
	free(c->boots);
	c->boots = NULL;
	c->nboots = 0;
	c->naddrs = 0;
}

int fr_kernel_names_collector_new(struct fr_kernel_names_collector **ret)
{
	struct fr_kernel_names_collector *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->dir_fd = -EBADF;
	*ret = c;
	return 0;
}

struct fr_kernel_names_collector *fr_kernel_names_collector_free(struct fr_kernel_names_collector *c)
{
	if (!c)
		return NULL;
	boots_free(c);
	free(c->prepared);
	set_done(&c->chunk);
	free(c->ranges);
	ZSTD_freeDCtx(c->dctx);
	free(c->content);
	closep(&c->dir_fd);
	free(c);
	return NULL;
}

int fr_kernel_names_collector_set_store(struct fr_kernel_names_collector *c, int dir_fd)
{
	if (c->store_set)
		return 0;
	c->store_set = true;
	if (dir_fd < 0)
		return 0;
	c->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	return c->dir_fd < 0 ? negative_errno() : 0;
}

void fr_kernel_names_collector_lend_ksyms(struct fr_kernel_names_collector *c, const uint8_t boot_id[16],
					  const struct fr_ksyms *ks)
{
	c->lent = ks;
	if (ks)
		memcpy(c->lent_boot, boot_id, 16);
}

void fr_kernel_names_collector_stats(const struct fr_kernel_names_collector *c, struct fr_kernel_names_stats *ret)
{
	*ret = c->st;
}

static struct boot_names *boot_of(struct fr_kernel_names_collector *c, const struct fr_chunk_info *ci)
{
	bool added;
	struct boot_names *v = fr_boot_slot((void **)&c->boots, &c->nboots, sizeof(*v), ci->boot_id, &added);

	if (v && added)
		v->first_wall = UINT64_MAX;
	return v;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether the chunk's symbols (sorted) name @a as a reader finds it
 * (symtab.c): the last one starting at or below it reaches past it. */
static bool covered(const struct fr_kernel_names_collector *c, uint64_t a)
{
	size_t lo = 0, hi = c->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->ranges[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < c->ranges[lo - 1].end;
}

/* One chunk's records: its kernel frames' addresses and its pid 0
 * symbols, then those not covered into its boot's set. */
static int collect_chunk(struct fr_kernel_names_collector *c, struct boot_names *bn, const struct fr_chunk_info *ci,
			 struct fr_record_iter *it)
{
	uint64_t frames[FR_SAMPLE_FRAMES_MAX];
	struct fr_record batch[DECODE_BATCH];
	size_t pos[DECODE_BATCH], got = 0, at = 0;
	int k = 0;

	set_clear(&c->chunk);
	c->nranges = 0;
	/* a record that does not decode ends the chunk, for readers too:
	 * those before it are named */
	for (uint32_t i = 0; i < ci->nrecords; i++) {
		if (at == got) {
			size_t want = MIN((size_t)(ci->nrecords - i), (size_t)DECODE_BATCH);
			got = fr_record_iter_read(it, batch, sizeof(*batch), pos, want);
			at = 0;
			if (got == 0) {
				/* (the end, short of nrecords: types skipped) */
				if (!fr_record_iter_done(it))
					c->st.chunks_undecoded++;
				break;
			}
		}
		const struct fr_record *r = &batch[at++];
		if (r->type == FR_REC_SYMBOL && r->pid == 0) {
			if (c->nranges == c->rangecap) {
				size_t cap = c->rangecap ? 2 * c->rangecap : 256;
				struct range *v = realloc(c->ranges, cap * sizeof(*v));
				if (!v)
					return -ENOMEM;
				c->ranges = v;
				c->rangecap = cap;
			}
			c->ranges[c->nranges++] = (struct range){ r->symbol.start, r->symbol.start + r->symbol.size };
			continue;
		}
		/* the record's stack, and an offcpu record's waker's */
		for (unsigned part = 0; part < 2; part++) {
			struct fr_record view;
			const struct fr_record *s = r;
			if (part == 1) {
				if (r->type != FR_REC_OFFCPU || !r->sched.waker.context)
					break;
				fr_record_waker_view(r, &view);
				s = &view;
			}
			if (!fr_record_type_has_stack(s->type) || s->stack.kernel_frames == 0)
				continue;
			int n = fr_record_frames(s, frames, ELEMENTSOF(frames));
			if (n < 0) {
				c->st.chunks_undecoded++;
				break;
			}
			for (int f = 0; f < n && f < s->stack.kernel_frames; f++) {
				k = set_add(&c->chunk, fr_frame_lookup_addr(frames[f], f == 0), FR_KERNEL_NAMES_ADDRS_MAX);
				if (k == -ENOSPC)
					c->st.addrs_left_out++;
				else if (k < 0)
					return k;
			}
		}
	}
	if (c->nranges > 1)
		qsort(c->ranges, c->nranges, sizeof(*c->ranges), cmp_range);
	for (size_t i = 0; i < c->chunk.n; i++) {
		uint64_t a = c->chunk.list[i];
		if (covered(c, a))
			continue;
		/* the bound is on all boots together */
		k = set_add(&bn->addrs, a, bn->addrs.n + (FR_KERNEL_NAMES_ADDRS_MAX - c->naddrs));
		if (k == -ENOSPC)
			c->st.addrs_left_out++;
		else if (k < 0)
			return k;
		else
			c->naddrs += (size_t)k;
	}
	return 0;
}

/* The snapshot of @bn's boot, once: none (or no store), and its frames
 * stay as the chunks leave them, as a reader of the store would. */
static void load_snapshot(struct fr_kernel_names_collector *c, struct boot_names *bn)
{
	char id[33];

	bn->loaded = true;
	if (c->lent && c->dir_fd >= 0 && memcmp(c->lent_boot, bn->boot_id, 16) == 0) {
		bn->ks = (struct fr_ksyms *)c->lent; /* not freed: ks_lent */
		bn->ks_lent = true;
	} else if (c->dir_fd >= 0)
		(void)fr_ksyms_load_snapshot(c->dir_fd, fr_format_boot_id(bn->boot_id, id, sizeof(id)), &bn->ks);
	if (!bn->ks)
		c->st.boots_unnamed++;
}

static int add_one(struct fr_kernel_names_collector *c, const uint8_t *chunk, size_t len)
{
	const size_t hl = sizeof(struct fr_chunk_header);
	struct fr_chunk_info ci;
	struct fr_record_iter it;
	struct boot_names *bn;
	size_t size;
	int k;

	k = fr_chunk_header_parse((const struct fr_chunk_header *)chunk, &ci);
	if (k < 0 || hl + ci.payload_size > len) {
		c->st.chunks_undecoded++;
		return 0;
	}
	c->seqnum_max = MAX(c->seqnum_max, ci.seqnum);
	if (ci.cpu == FR_CPU_META)
		return 0; /* keyframes: no stacks */
	bn = boot_of(c, &ci);
	if (!bn)
		return -ENOMEM;
	if (ci.cpu == FR_CPU_NAMES) {
		bn->carried = true;
		return 0;
	}
	bn->first_wall = MIN(bn->first_wall, ci.first_ts + (uint64_t)ci.realtime_offset);
	bn->last_wall = MAX(bn->last_wall, ci.last_ts + (uint64_t)ci.realtime_offset);
	bn->realtime_offset = ci.realtime_offset;
	bn->monotonic_offset = ci.monotonic_offset;
	if (bn->carried)
		return 0;
	/* without the boot's snapshot nothing can be named: not decoded */
	if (!bn->loaded)
		load_snapshot(c, bn);
	if (!bn->ks)
		return 0;
	size = fr_chunk_content_size(&ci);
	if (size > c->content_cap) {
		uint8_t *p = realloc(c->content, size);
		if (!p)
			return -ENOMEM;
		c->content = p;
		c->content_cap = size;
	}
	if (!c->dctx && !(c->dctx = ZSTD_createDCtx()))
		return -ENOMEM;
	/* no rows: the records are read where they are decompressed */
	k = fr_chunk_payload_decode(c->dctx, &ci, chunk + hl, NULL, c->content, &it);
	if (k < 0) {
		c->st.chunks_undecoded++;
		return 0;
	}
	return collect_chunk(c, bn, &ci, &it);
}

int fr_kernel_names_collector_add(struct fr_kernel_names_collector *c, const uint8_t *chunks, size_t len)
{
	const size_t hl = sizeof(struct fr_chunk_header);

	while (len >= hl) {
		struct fr_chunk_info ci;
		size_t n = len;
		int k;

		/* the next chunk's place, from its header (the rest, when that
		 * does not verify: add_one counts it) */
		if (fr_chunk_header_parse((const struct fr_chunk_header *)chunks, &ci) == 0)
			n = MIN(len, (size_t)fr_chunk_disk_size(&ci));
		k = add_one(c, chunks, n);
		if (k < 0)
			return k;
		chunks += n;
		len -= n;
	}
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct fr_ksym *x = *(const struct fr_ksym *const *)a, *y = *(const struct fr_ksym *const *)b;

	return x < y ? -1 : x > y;
}

/* The addresses of @bn collected since the last call looked up in its
 * snapshot. */
static int resolve_boot(struct fr_kernel_names_collector *c, struct boot_names *bn)
{
	if (bn->carried || !bn->ks)
		return 0;
	for (; bn->resolved < bn->addrs.n; bn->resolved++) {
		const struct fr_ksym *s = fr_ksyms_lookup(bn->ks, bn->addrs.list[bn->resolved]);
		if (!s) {
			c->st.addrs_unknown++;
			continue;
		}
		if (bn->nfound == bn->foundcap) {
			size_t cap = bn->foundcap ? 2 * bn->foundcap : 256;
			const struct fr_ksym **v = realloc(bn->found, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			bn->found = v;
			bn->foundcap = cap;
		}
		bn->found[bn->nfound++] = s;
	}
	return 0;
}

int fr_kernel_names_collector_resolve(struct fr_kernel_names_collector *c)
{
	int k = 0;

	for (size_t i = 0; i < c->nboots && k >= 0; i++)
		k = resolve_boot(c, &c->boots[i]);
	return k;
}

/* Closes @b as the next names chunk, spanning @like, onto *@out. */
static int close_into(struct fr_kernel_names_collector *c, struct fr_chunk_builder *b, ZSTD_CCtx *cctx,
		      struct fr_chunk_info *like, uint8_t **out, size_t *out_len)
{
	void *buf;
	size_t len;
	int k;

	like->seqnum = ++c->seqnum_max;
	k = fr_chunk_builder_close_spanning(b, cctx, like, &buf, &len);
	return k < 0 ? k : fr_chunks_append(out, out_len, buf, len);
}

/* What the names chunks of boot @bn span: its chunks on the wall clock,
 * as windows select, with the clock offsets of the last one. */
static struct fr_chunk_info boot_span(const struct boot_names *bn)
{
	struct fr_chunk_info like = {
		.first_ts = bn->first_wall - (uint64_t)bn->realtime_offset,
		.last_ts = bn->last_wall - (uint64_t)bn->realtime_offset,
		.realtime_offset = bn->realtime_offset,
		.monotonic_offset = bn->monotonic_offset,
	};

	memcpy(like.boot_id, bn->boot_id, 16);
	if (like.first_ts > like.last_ts)
		like.first_ts = like.last_ts;
	return like;
}

/* The names chunks of boot @bn, its functions found, appended to *out. */
static int boot_chunks(struct fr_kernel_names_collector *c, struct boot_names *bn, ZSTD_CCtx *cctx, uint8_t **out,
		       size_t *out_len)
{
	const struct fr_ksym **v = bn->found;
	struct fr_chunk_builder *b = NULL;
	struct fr_chunk_info like = boot_span(bn);
	size_t n = bn->nfound;
	int k;

	/* once per function, in address order (the snapshot's) */
	qsort(v, n, sizeof(*v), cmp_ksym);
	k = fr_chunk_builder_new(FR_CPU_NAMES, NAMES_RAW_MAX, &b);
	for (size_t i = 0; i < n && k >= 0; i++) {
		if (i && v[i] == v[i - 1])
			continue;
		struct fr_record r = { .type = FR_REC_SYMBOL, .ts = like.first_ts };
		r.symbol.start = v[i]->addr;
		r.symbol.size = v[i]->size;
		r.symbol.name = v[i]->name;
		r.symbol.name_len = (uint32_t)strlen(v[i]->name);
		r.symbol.module = v[i]->module;
		r.symbol.module_len = (uint32_t)strlen(v[i]->module);
		k = fr_chunk_builder_add(b, &r);
		if (k == -ENOBUFS) {
			k = close_into(c, b, cctx, &like, out, out_len);
			if (k == 0)
				k = fr_chunk_builder_add(b, &r);
		}
		if (k == 0)
			c->st.symbols++;
	}
	if (k >= 0 && fr_chunk_builder_count(b))
		k = close_into(c, b, cctx, &like, out, out_len);
	fr_chunk_builder_free(b);
	return k < 0 ? k : 0;
}

/* The names chunks of every boot, for what was added so far, into
 * *out. */
static int build(struct fr_kernel_names_collector *c, uint8_t **out, size_t *out_len)
{
	ZSTD_CCtx *cctx = NULL;
	int k = fr_kernel_names_collector_resolve(c);

	for (size_t i = 0; i < c->nboots && k >= 0; i++) {
		struct boot_names *bn = &c->boots[i];

		if (bn->carried || bn->nfound == 0)
			continue;
		/* as the daemon compresses (the frame checksum lets any zstd
		 * tool verify a payload alone) */
		if (!cctx && (!(cctx = ZSTD_createCCtx()) ||
			      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)) ||
			      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))))
			k = -ENOMEM;
		if (k >= 0)
			k = boot_chunks(c, bn, cctx, out, out_len);
	}
	ZSTD_freeCCtx(cctx);
	return k;
}

/* The chunks of one boot that build() made: the same as it would make
 * now if no address has been added since, and the boot's first chunk is
 * the same (only later ones were added). */
static bool prepared_fits(const struct fr_kernel_names_collector *c)
{
	return c->prepared && c->nboots == 1 && !c->boots[0].carried && c->naddrs == c->prepared_naddrs &&
	       c->boots[0].first_wall == c->prepared_first;
}

int fr_kernel_names_collector_prepare(struct fr_kernel_names_collector *c)
{
	uint64_t seqnum_max = c->seqnum_max, symbols = c->st.symbols;
	int k;

	if (prepared_fits(c))
		return 0;
	free(c->prepared);
	c->prepared = NULL;
	c->prepared_len = 0;
	if (c->nboots != 1 || c->boots[0].carried)
		return 0; /* made when finished */
	k = build(c, &c->prepared, &c->prepared_len);
	/* counted, and numbered, when they are taken */
	c->prepared_symbols = c->st.symbols - symbols;
	c->st.symbols = symbols;
	c->seqnum_max = seqnum_max;
	c->prepared_naddrs = c->naddrs;
	c->prepared_first = c->boots[0].first_wall;
	if (k < 0) {
		free(c->prepared);
		c->prepared = NULL;
	}
	return k;
}

int fr_kernel_names_collector_finish(struct fr_kernel_names_collector *c, uint8_t **ret, size_t *ret_len)
{
	_cleanup_free_ uint8_t *out = NULL;
	size_t out_len = 0;
	int k = 0;

	if (prepared_fits(c)) {
		/* only their span and numbers are new: after the chunks
		 * added since, and spanning them */
		struct fr_chunk_info like = boot_span(&c->boots[0]);
		out = TAKE_PTR(c->prepared);
		out_len = c->prepared_len;
		for (size_t off = 0; off < out_len;) {
			struct fr_chunk_info ci;
			if (fr_chunk_header_parse((const struct fr_chunk_header *)(out + off), &ci) < 0) {
				k = -EIO; /* ours, just made: cannot be */
				break;
			}
			like.seqnum = ++c->seqnum_max;
			fr_chunk_respan(out + off, &like);
			off += fr_chunk_disk_size(&ci);
		}
		c->st.symbols += c->prepared_symbols;
	} else
		k = build(c, &out, &out_len);
	free(c->prepared);
	c->prepared = NULL;
	boots_free(c);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(out);
	*ret_len = out_len;
	return 0;
}

struct names_chunk {
	uint8_t boot_id[16];
	struct fr_symtab t;
};
_Static_assert(offsetof(struct names_chunk, boot_id) == 0, "fr_boot_slot()");

struct fr_kernel_names {
	struct names_chunk *v; /* one per boot */
	size_t n;
	void **bufs; /* the chunks' contents, which the symbols point into */
	size_t nbufs;
};

struct fr_kernel_names *fr_kernel_names_free(struct fr_kernel_names *kn)
{
	if (!kn)
		return NULL;
	for (size_t i = 0; i < kn->n; i++)
		fr_symtab_done(&kn->v[i].t);
	for (size_t i = 0; i < kn->nbufs; i++)
		free(kn->bufs[i]);
	free(kn->v);
	free(kn->bufs);
	free(kn);
	return NULL;
}

static struct names_chunk *names_of(struct fr_kernel_names *kn, const uint8_t boot_id[16])
{
	return fr_boot_slot((void **)&kn->v, &kn->n, sizeof(*kn->v), boot_id, NULL);
}

/* Names chunk @ref into @kn: its content kept, its symbols into its
 * boot's table.  Read, not loaded: the window counts a damaged one when
 * it loads it as one of its chunks. */
static int load_one(struct fr_kernel_names *kn, struct fr_store_reader *r, ZSTD_DCtx *dctx,
		    const struct fr_chunk_ref *ref)
{
	_cleanup_free_ uint8_t *chunk = NULL, *content = NULL;
	struct fr_record_iter it;
	struct names_chunk *nc;
	size_t len, pos;
	void **bufs;
	int k;

	bufs = realloc(kn->bufs, (kn->nbufs + 1) * sizeof(*bufs));
	if (!bufs)
		return -ENOMEM;
	kn->bufs = bufs;
	k = fr_store_reader_read_chunk(r, ref, &chunk, &len);
	if (k < 0)
		return k;
	content = malloc(MAX(fr_chunk_content_size(&ref->info), (size_t)1));
	if (!content)
		return -ENOMEM;
	/* no rows: the symbols point into the content, kept */
	k = fr_chunk_payload_decode(dctx, &ref->info, chunk + sizeof(struct fr_chunk_header), NULL, content, &it);
	if (k < 0)
		return k;
	nc = names_of(kn, ref->info.boot_id);
	if (!nc)
		return -ENOMEM;
	kn->bufs[kn->nbufs++] = TAKE_PTR(content);
	for (uint32_t i = 0; i < ref->info.nrecords; i++) {
		struct fr_record rec;
		if (fr_record_iter_next(&it, &rec, &pos) < 0)
			return fr_record_iter_done(&it) ? 0 : -EBADMSG; /* the symbols before stay */
		if (rec.type == FR_REC_SYMBOL && rec.pid == 0 && fr_symtab_add(&nc->t, &rec) < 0)
			return -ENOMEM;
	}
	return 0;
}

int fr_kernel_names_load(struct fr_store_reader *r, const struct fr_chunk_ref *refs, size_t n,
			 struct fr_kernel_names **ret, uint64_t *ret_damaged)
{
	struct fr_kernel_names *kn = NULL;
	ZSTD_DCtx *dctx = NULL;
	int k = 0;

	*ret = NULL;
	for (size_t i = 0; i < n && k >= 0; i++) {
		if (refs[i].info.cpu != FR_CPU_NAMES)
			continue;
		if ((!kn && !(kn = calloc(1, sizeof(*kn)))) || (!dctx && !(dctx = ZSTD_createDCtx()))) {
			k = -ENOMEM;
			break;
		}
		k = load_one(kn, r, dctx, &refs[i]);
		if (k == -EBADMSG) {
			if (ret_damaged)
				(*ret_damaged)++;
			k = 0;
		}
	}
	ZSTD_freeDCtx(dctx);
	if (k < 0) {
		fr_kernel_names_free(kn);
		return k;
	}
	for (size_t i = 0; kn && i < kn->n; i++)
		fr_symtab_finish(&kn->v[i].t);
	*ret = kn;
	return 0;
}

const struct fr_symtab *fr_kernel_names_find(const struct fr_kernel_names *kn, const uint8_t boot_id[16])
{
	for (size_t i = 0; kn && i < kn->n; i++)
		if (memcmp(kn->v[i].boot_id, boot_id, 16) == 0)
			return &kn->v[i].t;
	return NULL;
}
