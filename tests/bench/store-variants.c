/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark aid (not a test): how much smaller a recorded store would be
 * under other encodings, before changing the format (retention.sh runs it
 * on the store it measured).  Reads every chunk of STORE and prints:
 *   - the payloads as stored, and compressed again the same way (a check);
 *   - repeats within a chunk: stacks (sample and offcpu records) seen
 *     before in their chunk, and symbol and mapping descriptions that
 *     another pid of the same chunk already had (the same name, module
 *     and start; the same path, start and build id): what interning each
 *     within the chunk could save at most;
 *   - the same chunks encoded again (lib/chunk.c) as they are, without
 *     the kernel's symbol descriptions (which the store's kallsyms snapshot
 *     has), without the descriptions another pid of the chunk had, and
 *     without any descriptions (symbols, mappings, inline functions): the
 *     floor of any way of describing them;
 *     and with times and durations in microseconds, not nanoseconds
 *     (what the records' precision costs);
 *   - across chunks: each chunk compressed with a zstd dictionary of
 *     DICT_KIB trained on the first quarter of the chunks (the rest
 *     measured), with the previous chunk of its CPU as zstd's prefix,
 *     chains restarting every N chunks, and the whole store as one zstd
 *     frame at level 19 with long matching: the most that any scheme
 *     across chunks (a dictionary, segments compressed again) could take.
 *   store-variants STORE [LEVEL]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zdict.h>
#include <zstd.h>

#include "chunk.h"
#include "record.h"
#include "store-format.h"
#include "store-reader.h"

#define DICT_KIB 64
#define SEEN_SLOTS (1u << 16)

struct content {
	uint8_t *p;
	size_t n;
	uint32_t cpu;
};

/* the re-encoded variants: which records each leaves out */
enum { V_ALL, V_BARE, V_NO_KSYMS, V_NO_REPEATS, V_NO_DESCRIPTIONS, V_MICROS, V__N };
static const char *const variant_names[V__N] = {
	[V_ALL] = "as they are",
	[V_BARE] = "with descriptions bare (the time of the record before, no comm, tid or cgroup)",
	[V_NO_KSYMS] = "without the kernel's symbol descriptions",
	[V_NO_REPEATS] = "without descriptions another pid of the chunk had",
	[V_NO_DESCRIPTIONS] = "without any descriptions",
	[V_MICROS] = "with times and durations in microseconds (not nanoseconds)",
};
#define M_KSYM 1u
#define M_REPEAT 2u
#define M_DESCRIPTION 4u
#define M_BARE 8u /* not a mask of records left out: the descriptions made bare */
#define M_MICROS 16u /* nor this: times and durations cut to the microsecond */

struct scan {
	struct fr_store_reader *r;
	ZSTD_DCtx *dctx;
	struct content *c;
	size_t n, cap;
	uint64_t payload;
	uint64_t stacks, stacks_repeated;
	uint64_t symbols, symbols_repeated, mappings, mappings_repeated;
	uint64_t variant[V__N];
	ZSTD_CCtx *cctx;
	struct fr_record *recs;
	uint8_t *mask;
	size_t recs_cap;
	/* what this chunk has had: hashes, and the pid that had each */
	uint64_t seen[SEEN_SLOTS];
	uint32_t seen_pid[SEEN_SLOTS];
	uint32_t seen_gen[SEEN_SLOTS], gen;
};

static uint64_t hash(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

/* Has this chunk had @h before (from another pid if @other_pid)?  Remembers it. */
static int had(struct scan *s, uint64_t h, uint32_t pid, int other_pid)
{
	uint32_t i = (uint32_t)h & (SEEN_SLOTS - 1);

	for (unsigned probe = 0; probe < SEEN_SLOTS / 2; probe++, i = (i + 1) & (SEEN_SLOTS - 1)) {
		if (s->seen_gen[i] != s->gen) {
			s->seen_gen[i] = s->gen;
			s->seen[i] = h;
			s->seen_pid[i] = pid;
			return 0;
		}
		if (s->seen[i] == h)
			return !other_pid || s->seen_pid[i] != pid;
	}
	return 0;
}

/* Counts @r; returns what it is (M_*). */
static uint8_t count(struct scan *s, const struct fr_record *r)
{
	uint64_t h;
	int rep;

	if (fr_record_type_has_stack(r->type) && r->stack.kernel_frames + r->stack.user_frames) {
		h = hash(r->stack.enc, r->stack.enc_len, r->stack.kernel_frames * 131 + r->stack.user_frames);
		s->stacks++;
		s->stacks_repeated += had(s, h, r->pid, 0);
	} else if (r->type == FR_REC_SYMBOL) {
		h = hash(r->symbol.name, r->symbol.name_len, hash(r->symbol.module, r->symbol.module_len, r->symbol.start));
		s->symbols++;
		rep = had(s, h ^ 0x5bd1e995, r->pid, 1);
		s->symbols_repeated += rep;
		return M_DESCRIPTION | (rep ? M_REPEAT : 0) | (r->pid == 0 ? M_KSYM : 0);
	} else if (r->type == FR_REC_MAPPING) {
		h = hash(r->mapping.path, r->mapping.path_len,
			 hash(r->mapping.build_id, r->mapping.build_id_len, r->mapping.start));
		s->mappings++;
		rep = had(s, h ^ 0x27d4eb2f, r->pid, 1);
		s->mappings_repeated += rep;
		return M_DESCRIPTION | (rep ? M_REPEAT : 0);
	} else if (r->type == FR_REC_INLINE)
		return M_DESCRIPTION;
	return 0;
}

/* The chunk's @n records encoded again without those @drop marks. */
static int encode_again(struct scan *s, const struct fr_chunk_info *ci, size_t n, uint8_t drop, uint64_t *sum)
{
	struct fr_chunk_builder *b;
	void *buf = NULL;
	size_t len;
	int k = fr_chunk_builder_new(ci->cpu, FR_CHUNK_RAW_MAX, &b);

	if (k < 0)
		return k;
	for (size_t i = 0; i < n && k >= 0; i++) {
		struct fr_record r = s->recs[i];
		uint64_t frames[FR_SAMPLE_FRAMES_MAX];

		uint64_t wframes[FR_SAMPLE_FRAMES_MAX];

		if (s->mask[i] & drop & ~(M_BARE | M_MICROS))
			continue;
		if (drop & M_MICROS) {
			/* in microseconds: what an encoding in that unit
			 * would store (the chunk's span is then not its
			 * records', which this size does not mind) */
			r.ts /= 1000;
			if (r.type == FR_REC_OFFCPU || r.type == FR_REC_RUNQ)
				r.sched.duration_ns /= 1000;
			else if (r.type == FR_REC_SYSCALL)
				r.syscall.duration_ns /= 1000;
			else if (r.type == FR_REC_BLOCK)
				r.block.duration_ns /= 1000;
		}
		if ((drop & M_BARE) && (s->mask[i] & M_DESCRIPTION) && i > 0) {
			r.ts = s->recs[i - 1].ts;
			r.tid = r.pid;
			r.cgroup_id = 0;
			r.comm_len = 0;
			r.comm[0] = 0;
		}
		/* decoded frames are an encoding; the encoder takes addresses */
		if (fr_record_type_has_stack(r.type) && (k = fr_record_frames(&r, frames, FR_SAMPLE_FRAMES_MAX)) >= 0) {
			r.stack.kframes = frames;
			r.stack.uframes = frames + r.stack.kernel_frames;
		}
		/* and an offcpu record's waker's (as lib/redact.c) */
		if (k >= 0 && r.type == FR_REC_OFFCPU && r.sched.waker.context) {
			struct fr_record view;
			fr_record_waker_view(&r, &view);
			k = fr_record_frames(&view, wframes, FR_SAMPLE_FRAMES_MAX);
			r.sched.waker.stack.kframes = wframes;
			r.sched.waker.stack.uframes = wframes + view.stack.kernel_frames;
		}
		if (k >= 0)
			k = fr_chunk_builder_add(b, &r);
	}
	if (k >= 0 && fr_chunk_builder_count(b) > 0)
		k = fr_chunk_builder_close_as(b, s->cctx, ci, &buf, &len);
	if (k >= 0 && buf)
		*sum += len - sizeof(struct fr_chunk_header);
	free(buf);
	fr_chunk_builder_free(b);
	return k;
}

static int chunk_cb(const struct fr_chunk_ref *ref, void *userdata)
{
	struct scan *s = userdata;
	const struct fr_chunk_info *ci = &ref->info;
	struct fr_record_iter it;
	size_t len, pos, size = fr_chunk_content_size(ci);
	uint8_t *buf, *content;

	if (fr_store_reader_read_chunk(s->r, ref, &buf, &len) < 0)
		return 0;
	content = malloc(size);
	if (!content || fr_chunk_payload_decode(s->dctx, ci, buf + sizeof(struct fr_chunk_header), NULL, content,
						&it) < 0) {
		free(content);
		free(buf);
		return 0;
	}
	free(buf);
	s->gen++;
	if (ci->nrecords > s->recs_cap) {
		free(s->recs);
		free(s->mask);
		s->recs_cap = ci->nrecords;
		s->recs = malloc(s->recs_cap * sizeof(*s->recs));
		s->mask = malloc(s->recs_cap);
		if (!s->recs || !s->mask)
			return -1;
	}
	size_t n = 0;
	for (; n < ci->nrecords && fr_record_iter_next(&it, &s->recs[n], &pos) == 0; n++)
		s->mask[n] = count(s, &s->recs[n]);
	static const uint8_t drops[V__N] = {
		[V_ALL] = 0, [V_BARE] = M_BARE, [V_NO_KSYMS] = M_KSYM, [V_NO_REPEATS] = M_REPEAT, [V_NO_DESCRIPTIONS] = M_DESCRIPTION,
		[V_MICROS] = M_MICROS,
	};
	for (unsigned v = 0; v < V__N; v++)
		if (encode_again(s, ci, n, drops[v], &s->variant[v]) < 0)
			return -1;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct content *c = realloc(s->c, cap * sizeof(*c));

		if (!c) {
			free(content);
			return -1;
		}
		s->c = c;
		s->cap = cap;
	}
	s->c[s->n++] = (struct content){ content, size, ci->cpu };
	s->payload += ci->payload_size;
	return 0;
}

static size_t compress_all(ZSTD_CCtx *z, const struct content *c, size_t from, size_t to, const ZSTD_CDict *d,
			   int level, void *out, size_t cap)
{
	size_t sum = 0;

	for (size_t i = from; i < to; i++)
		sum += d ? ZSTD_compress_usingCDict(z, out, cap, c[i].p, c[i].n, d) :
			   ZSTD_compressCCtx(z, out, cap, c[i].p, c[i].n, level);
	return sum;
}

/* Each chunk with the previous one of its CPU as prefix, chains of @every. */
static size_t chained(ZSTD_CCtx *z, const struct content *c, size_t n, unsigned every, int level, void *out,
		      size_t cap)
{
	size_t sum = 0;
	long last[4096];
	unsigned depth[4096] = {};

	memset(last, -1, sizeof(last));
	for (size_t i = 0; i < n; i++) {
		unsigned cpu = c[i].cpu % 4096;

		ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
		if (last[cpu] >= 0 && depth[cpu] + 1 < every) {
			ZSTD_CCtx_refPrefix(z, c[last[cpu]].p, c[last[cpu]].n);
			depth[cpu]++;
		} else
			depth[cpu] = 0;
		sum += ZSTD_compress2(z, out, cap, c[i].p, c[i].n);
		last[cpu] = (long)i;
	}
	return sum;
}

/* Every chunk's content, end to end, compressed as one frame at level 19
 * with long-distance matching over 128 MiB. */
static size_t whole(ZSTD_CCtx *z, const struct content *c, size_t n)
{
	size_t len = 0, at = 0, r;
	uint8_t *all, *out;

	for (size_t i = 0; i < n; i++)
		len += c[i].n;
	all = malloc(len);
	out = malloc(ZSTD_compressBound(len));
	if (!all || !out) {
		free(all);
		free(out);
		return 0;
	}
	for (size_t i = 0; i < n; at += c[i].n, i++)
		memcpy(all + at, c[i].p, c[i].n);
	ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 19);
	ZSTD_CCtx_setParameter(z, ZSTD_c_enableLongDistanceMatching, 1);
	ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, 27);
	r = ZSTD_compress2(z, out, ZSTD_compressBound(len), all, len);
	free(all);
	free(out);
	return ZSTD_isError(r) ? 0 : r;
}

int main(int argc, char **argv)
{
	static struct scan s;
	int level = argc > 2 ? atoi(argv[2]) : 3;
	size_t cap = FR_CHUNK_RAW_MAX * 2, q, plain, rest_plain, total = 0;
	ZSTD_CCtx *z = ZSTD_createCCtx();
	uint8_t *out = malloc(cap), *samples, *dict = malloc(DICT_KIB * 1024);
	size_t *sizes;

	if (argc < 2) {
		fprintf(stderr, "usage: store-variants STORE [LEVEL]\n");
		return 2;
	}
	s.dctx = ZSTD_createDCtx();
	s.cctx = ZSTD_createCCtx();
	if (s.cctx)
		ZSTD_CCtx_setParameter(s.cctx, ZSTD_c_compressionLevel, level);
	if (!z || !out || !dict || !s.dctx || fr_store_reader_open(argv[1], &s.r) < 0 ||
	    fr_store_reader_foreach(s.r, chunk_cb, &s) < 0 || s.n < 8) {
		fprintf(stderr, "store-variants: cannot read %s (or fewer than 8 chunks)\n", argv[1]);
		return 1;
	}
	plain = compress_all(z, s.c, 0, s.n, NULL, level, out, cap);
	printf("%zu chunks: payloads %" PRIu64 " bytes as stored, %zu compressed again at level %d\n", s.n, s.payload,
	       plain, level);
	printf("within a chunk: stacks seen before in it %" PRIu64 " of %" PRIu64 " (%.1f%%); symbol descriptions "
	       "another pid had %" PRIu64 " of %" PRIu64 " (%.1f%%); mapping descriptions %" PRIu64 " of %" PRIu64
	       " (%.1f%%)\n",
	       s.stacks_repeated, s.stacks, s.stacks ? 100.0 * (double)s.stacks_repeated / (double)s.stacks : 0.0,
	       s.symbols_repeated, s.symbols,
	       s.symbols ? 100.0 * (double)s.symbols_repeated / (double)s.symbols : 0.0, s.mappings_repeated,
	       s.mappings, s.mappings ? 100.0 * (double)s.mappings_repeated / (double)s.mappings : 0.0);

	for (unsigned v = 0; v < V__N; v++)
		printf("encoded again %s: %" PRIu64 " bytes (%.2fx smaller than as stored)\n", variant_names[v],
		       s.variant[v], s.variant[v] ? (double)s.payload / (double)s.variant[v] : 0.0);

	q = s.n / 4;
	sizes = malloc(q * sizeof(*sizes));
	for (size_t i = 0; i < q; i++)
		total += sizes[i] = s.c[i].n;
	samples = malloc(total);
	for (size_t i = 0, at = 0; i < q; at += s.c[i].n, i++)
		memcpy(samples + at, s.c[i].p, s.c[i].n);
	size_t dn = ZDICT_trainFromBuffer(dict, DICT_KIB * 1024, samples, sizes, (unsigned)q);
	rest_plain = compress_all(z, s.c, q, s.n, NULL, level, out, cap);
	if (ZDICT_isError(dn))
		printf("dictionary: not trained: %s\n", ZDICT_getErrorName(dn));
	else {
		ZSTD_CDict *d = ZSTD_createCDict(dict, dn, level);
		size_t with = compress_all(z, s.c, q, s.n, d, level, out, cap);

		printf("a %zu-byte dictionary trained on the first %zu chunks: the other %zu take %zu bytes instead of "
		       "%zu (%.2fx smaller)\n",
		       dn, q, s.n - q, with, rest_plain, (double)rest_plain / (double)with);
		ZSTD_freeCDict(d);
	}
	for (unsigned every = 10; every <= 40; every *= 2) {
		size_t c = chained(z, s.c, s.n, every, level, out, cap);

		printf("chained, the previous chunk of the CPU as prefix, chains of %u: %zu bytes (%.2fx smaller)\n",
		       every, c, (double)plain / (double)c);
	}
	size_t w = whole(z, s.c, s.n);
	printf("the whole store as one zstd frame, level 19, long matching (the most any scheme across chunks, a "
	       "dictionary or a segment compressed again, could take out): %zu bytes (%.2fx smaller)\n",
	       w, w ? (double)plain / (double)w : 0.0);
	return 0;
}
