/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#include "../bpf/event.h"
#include "clock.h"
#include "chunk.h"
#include "macro.h"

/* What the open chunk has described (cgroups, mappings, symbols, inline
 * functions): an open-addressing set cleared by generation; when it is
 * three quarters full, further descriptions are repeated rather than
 * remembered (correct, slightly larger). */
#define DESCRIBED_SLOTS 1024

struct described_key {
	uint64_t id; /* cgroup id, the start of a mapping or symbol, an inline record's address */
	uint32_t pid;
	uint16_t type;
	uint32_t gen;
};

struct fr_chunk_builder {
	uint32_t cpu;
	/* the open chunk's records in columns, each stream with room for
	 * the whole chunk (only pages written take memory); @content is
	 * where the table and the streams are put together to compress */
	struct fr_record_streams streams;
	uint8_t *content;
	size_t raw_max, raw_len;
	uint32_t count, nevents;
	uint64_t gap_lost;
	uint64_t first_ts, last_ts, opened;
	size_t last_raw;
	struct fr_codec_state codec;
	struct described_key described[DESCRIBED_SLOTS];
	uint32_t described_gen; /* slots of other generations are free */
	unsigned ndescribed;
};

uint32_t fr_crc32(const void *p, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);
	const Bytef *b = p;

	/* zlib takes uInt lengths */
	while (n > 0) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		c = crc32(c, b, step);
		b += step;
		n -= step;
	}
	return (uint32_t)c;
}

int fr_chunk_builder_new(uint32_t cpu, size_t raw_max, struct fr_chunk_builder **ret)
{
	_cleanup_free_ struct fr_chunk_builder *b = NULL;

	if (raw_max < 4096 || raw_max > FR_CHUNK_RAW_MAX)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		b->streams.buf[i] = malloc(raw_max);
		b->streams.cap[i] = raw_max;
		if (!b->streams.buf[i]) {
			fr_chunk_builder_free(TAKE_PTR(b));
			return -ENOMEM;
		}
	}
	b->content = malloc(FR_REC_STREAM_TABLE + raw_max);
	if (!b->content) {
		fr_chunk_builder_free(TAKE_PTR(b));
		return -ENOMEM;
	}
	b->cpu = cpu;
	b->raw_max = raw_max;
	b->described_gen = 1;
	/* records are encoded as the header will say */
	b->codec.incompat_flags = FR_CHUNK_INCOMPAT_WRITE;
	*ret = TAKE_PTR(b);
	return 0;
}

struct fr_chunk_builder *fr_chunk_builder_free(struct fr_chunk_builder *b)
{
	if (!b)
		return NULL;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++)
		free(b->streams.buf[i]);
	free(b->content);
	free(b);
	return NULL;
}

/* The slot of a key: where it is, or the free one where it would go. */
static struct described_key *key_slot(struct fr_chunk_builder *b, uint64_t id, uint32_t pid, uint16_t type)
{
	uint64_t h = (id ^ ((uint64_t)pid << 32) ^ type) * 0x9e3779b97f4a7c15ULL;

	for (unsigned i = (unsigned)((h >> 32) % DESCRIBED_SLOTS);; i = (i + 1) % DESCRIBED_SLOTS) {
		struct described_key *k = &b->described[i];
		if (k->gen != b->described_gen || (k->id == id && k->pid == pid && k->type == type))
			return k;
	}
}

static struct described_key *described_slot(struct fr_chunk_builder *b, const struct fr_record *r)
{
	return key_slot(b, fr_record_described_id(r), r->pid, r->type);
}

bool fr_chunk_builder_described(struct fr_chunk_builder *b, const struct fr_record *r)
{
	return described_slot(b, r)->gen == b->described_gen;
}

bool fr_chunk_builder_cgroup_described(struct fr_chunk_builder *b, uint64_t cgroup_id)
{
	return key_slot(b, cgroup_id, 0, FR_REC_CGROUP)->gen == b->described_gen;
}

int fr_chunk_builder_add(struct fr_chunk_builder *b, const struct fr_record *r)
{
	uint32_t flags = b->codec.incompat_flags;
	int n;

	/* a chunk with an inline record says so: older readers refuse it
	 * rather than take it for damaged (store-format.h) */
	if (r->type == FR_REC_INLINE)
		b->codec.incompat_flags |= FR_CHUNK_INCOMPAT_INLINE;
	else if (r->type == FR_REC_TRIGGER)
		b->codec.incompat_flags |= FR_CHUNK_INCOMPAT_TRIGGER_CAUSE;
	else if (r->type == FR_REC_SIGNAL)
		b->codec.incompat_flags |= FR_CHUNK_INCOMPAT_SIGNAL_STACK;
	/* the chunk's bound is on all its streams together */
	n = fr_record_encode_streams(&b->codec, r, &b->streams, b->raw_max - b->raw_len);
	if (n < 0) {
		b->codec.incompat_flags = flags;
		return n;
	}
	b->raw_len += (size_t)n;
	if (b->count == 0 || r->ts < b->first_ts)
		b->first_ts = r->ts;
	if (b->count == 0 || r->ts > b->last_ts)
		b->last_ts = r->ts;
	b->count++;
	if (r->type == FR_REC_GAP)
		b->gap_lost += r->gap.lost;
	else if (!fr_record_type_is_meta(r->type))
		b->nevents++;
	if (fr_record_type_is_description(r->type) && b->ndescribed < DESCRIBED_SLOTS * 3 / 4) {
		struct described_key *k = described_slot(b, r);
		if (k->gen != b->described_gen) {
			*k = (struct described_key){ fr_record_described_id(r), r->pid, r->type, b->described_gen };
			b->ndescribed++;
		}
	}
	return 0;
}

int fr_chunk_builder_add_switch_events(struct fr_chunk_builder *b, const struct fr_event_switch *e, size_t n)
{
	int k;

	if (n == 0)
		return 0;
	k = fr_record_encode_switch_events(&b->codec, e, n, &b->streams, b->raw_max - b->raw_len);
	if (k < 0)
		return k;
	b->raw_len += (size_t)k;
	for (size_t i = 0; i < n; i++) {
		if (b->count == 0 || e[i].hdr.ts < b->first_ts)
			b->first_ts = e[i].hdr.ts;
		if (b->count == 0 || e[i].hdr.ts > b->last_ts)
			b->last_ts = e[i].hdr.ts;
		b->count++;
	}
	b->nevents += (uint32_t)n;
	return 0;
}

size_t fr_chunk_builder_raw_size(const struct fr_chunk_builder *b)
{
	return b->raw_len;
}

size_t fr_chunk_builder_last_raw(const struct fr_chunk_builder *b)
{
	return b->last_raw;
}

uint32_t fr_chunk_builder_count(const struct fr_chunk_builder *b)
{
	return b->count;
}

uint64_t fr_chunk_builder_first_ts(const struct fr_chunk_builder *b)
{
	return b->count ? b->first_ts : 0;
}

uint64_t fr_chunk_builder_opened(const struct fr_chunk_builder *b)
{
	return b->opened;
}

void fr_chunk_builder_set_opened(struct fr_chunk_builder *b, uint64_t mono_ns)
{
	b->opened = mono_ns;
}

/* @span, if not NULL: times the header covers besides the records'. */
static int close_chunk(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx, uint64_t seqnum,
		       const uint8_t boot_id[16], const struct fr_clock_offsets *off, const struct fr_chunk_info *span,
		       void **ret_buf, size_t *ret_len)
{
	_cleanup_free_ uint8_t *buf = NULL;
	struct fr_chunk_header h = {};
	size_t bound, z, total, content;

	if (b->count == 0)
		return -ENODATA;
	/* the stream table, then the streams */
	fr_record_streams_table(&b->streams, b->content);
	content = FR_REC_STREAM_TABLE;
	for (unsigned i = 0; i < FR_REC_STREAMS; i++) {
		memcpy(b->content + content, b->streams.buf[i], b->streams.len[i]);
		content += b->streams.len[i];
	}
	bound = ZSTD_compressBound(content);
	/* not zeroed: zstd's bound is the raw size and more, and what is
	 * written is a fraction of it (only the padding to 8 is zeroed) */
	buf = malloc(sizeof(h) + bound + 8);
	if (!buf)
		return -ENOMEM;
	z = ZSTD_compress2(cctx, buf + sizeof(h), bound, b->content, content);
	if (ZSTD_isError(z))
		return -EIO;
	total = ALIGN8(sizeof(h) + z);
	memset(buf + sizeof(h) + z, 0, total - sizeof(h) - z);

	memcpy(h.magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN);
	h.header_size = htole32(sizeof(h));
	h.version = htole16(FR_STORE_VERSION);
	h.incompat_flags = htole32(b->codec.incompat_flags);
	h.cpu = htole32(b->cpu);
	h.nrecords = htole32(b->count);
	memcpy(h.boot_id, boot_id, 16);
	h.first_ts = htole64(span ? MIN(b->first_ts, span->first_ts) : b->first_ts);
	h.last_ts = htole64(span ? MAX(b->last_ts, span->last_ts) : b->last_ts);
	h.realtime_offset = (int64_t)htole64((uint64_t)off->realtime);
	h.monotonic_offset = (int64_t)htole64((uint64_t)off->monotonic);
	h.seqnum = htole64(seqnum);
	h.raw_size = htole32((uint32_t)b->raw_len);
	h.payload_size = htole32((uint32_t)z);
	h.payload_crc = htole32(fr_crc32(buf + sizeof(h), z));
	h.nevents = htole32(b->nevents);
	h.gap_lost = htole64(b->gap_lost);
	h.header_crc = htole32(fr_crc32(&h, offsetof(struct fr_chunk_header, header_crc)));
	memcpy(buf, &h, sizeof(h));

	b->last_raw = b->raw_len;
	b->raw_len = 0;
	memset(b->streams.len, 0, sizeof(b->streams.len));
	b->count = 0;
	b->nevents = 0;
	b->gap_lost = 0;
	b->opened = 0;
	b->ndescribed = 0;
	if (++b->described_gen == 0) {
		memset(b->described, 0, sizeof(b->described));
		b->described_gen = 1;
	}
	b->codec.prev_ts = 0;
	b->codec.incompat_flags = FR_CHUNK_INCOMPAT_WRITE;
	*ret_buf = TAKE_PTR(buf);
	*ret_len = total;
	return 0;
}

int fr_chunk_builder_close(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx, uint64_t seqnum,
			   const uint8_t boot_id[16], void **ret_buf, size_t *ret_len)
{
	struct fr_clock_offsets off;

	if (b->count == 0)
		return -ENODATA;
	/* the offsets turn BPF's boottime stamps into wall and monotonic
	 * time for this chunk */
	fr_clock_offsets_read(&off, NULL);
	return close_chunk(b, cctx, seqnum, boot_id, &off, NULL, ret_buf, ret_len);
}

int fr_chunk_builder_close_as(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx, const struct fr_chunk_info *like,
			      void **ret_buf, size_t *ret_len)
{
	struct fr_clock_offsets off = { like->realtime_offset, like->monotonic_offset };

	return close_chunk(b, cctx, like->seqnum, like->boot_id, &off, NULL, ret_buf, ret_len);
}

int fr_chunk_builder_close_spanning(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx,
				    const struct fr_chunk_info *like, void **ret_buf, size_t *ret_len)
{
	struct fr_clock_offsets off = { like->realtime_offset, like->monotonic_offset };

	return close_chunk(b, cctx, like->seqnum, like->boot_id, &off, like, ret_buf, ret_len);
}

void fr_chunk_respan(void *chunk, const struct fr_chunk_info *like)
{
	struct fr_chunk_header *h = chunk;

	h->first_ts = htole64(MIN(le64toh(h->first_ts), like->first_ts));
	h->last_ts = htole64(MAX(le64toh(h->last_ts), like->last_ts));
	h->realtime_offset = (int64_t)htole64((uint64_t)like->realtime_offset);
	h->monotonic_offset = (int64_t)htole64((uint64_t)like->monotonic_offset);
	h->seqnum = htole64(like->seqnum);
	h->header_crc = htole32(fr_crc32(h, offsetof(struct fr_chunk_header, header_crc)));
}

int fr_chunks_append(uint8_t **out, size_t *len, void *buf, size_t n)
{
	uint8_t *p = realloc(*out, *len + n);

	if (!p) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(p + *len, buf, n);
	free(buf);
	*out = p;
	*len += n;
	return 0;
}

int fr_chunk_header_parse(const struct fr_chunk_header *h, struct fr_chunk_info *ci)
{
	if (memcmp(h->magic, FR_CHUNK_MAGIC, FR_MAGIC_LEN) != 0)
		return -EBADMSG;
	if (fr_crc_mismatch(le32toh(h->header_crc), fr_crc32(h, offsetof(struct fr_chunk_header, header_crc))))
		return -EBADMSG;
	if (le16toh(h->version) != FR_STORE_VERSION)
		return -EPROTONOSUPPORT;
	if (le32toh(h->incompat_flags) & ~FR_CHUNK_INCOMPAT_KNOWN)
		return -EPROTONOSUPPORT;
	if (le32toh(h->header_size) != sizeof(*h))
		return -EBADMSG;
	*ci = (struct fr_chunk_info){
		.cpu = le32toh(h->cpu),
		.nrecords = le32toh(h->nrecords),
		.first_ts = le64toh(h->first_ts),
		.last_ts = le64toh(h->last_ts),
		.realtime_offset = (int64_t)le64toh((uint64_t)h->realtime_offset),
		.monotonic_offset = (int64_t)le64toh((uint64_t)h->monotonic_offset),
		.seqnum = le64toh(h->seqnum),
		.raw_size = le32toh(h->raw_size),
		.payload_size = le32toh(h->payload_size),
		.payload_crc = le32toh(h->payload_crc),
		.nevents = le32toh(h->nevents),
		.gap_lost = le64toh(h->gap_lost),
		.incompat_flags = le32toh(h->incompat_flags),
	};
	memcpy(ci->boot_id, h->boot_id, 16);
	if (ci->raw_size > FR_CHUNK_RAW_MAX || ci->payload_size > FR_CHUNK_PAYLOAD_MAX ||
	    ci->payload_size == 0 || ci->nrecords == 0 || ci->nevents > ci->nrecords ||
	    ci->first_ts > ci->last_ts)
		return -EBADMSG;
	return 0;
}

int fr_chunk_payload_decode(struct ZSTD_DCtx_s *dctx, const struct fr_chunk_info *ci,
			    const void *payload, uint8_t *raw, uint8_t *scratch, struct fr_record_iter *it)
{
	size_t size = fr_chunk_content_size(ci), n;
	bool columns = ci->incompat_flags & FR_CHUNK_INCOMPAT_STREAMS;
	/* without @raw, rows are read where they are decompressed */
	uint8_t *content = columns || !raw ? scratch : raw;

	if (fr_crc_mismatch(fr_crc32(payload, ci->payload_size), ci->payload_crc))
		return -EBADMSG;
	if (ZSTD_getFrameContentSize(payload, ci->payload_size) != size)
		return -EBADMSG;
	n = ZSTD_decompressDCtx(dctx, content, size, payload, ci->payload_size);
	if (ZSTD_isError(n) || n != size)
		return -EBADMSG;
	return fr_record_iter_init(it, ci->incompat_flags, content, size, columns || raw ? raw : content, ci->raw_size);
}
