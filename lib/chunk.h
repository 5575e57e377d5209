/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chunks: a batch of encoded records from one CPU, compressed as one zstd
 * frame, behind a checksummed header.  The builder side is used by the
 * daemon, the verify/decode side by every reader.
 */
#ifndef FR_CHUNK_H
#define FR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "store-format.h"

struct fr_chunk_builder;
struct ZSTD_CCtx_s;

/* Host-order view of a chunk header. */
struct fr_chunk_info {
	uint32_t cpu;
	uint32_t nrecords;
	uint8_t boot_id[16];
	uint64_t first_ts, last_ts;
	int64_t realtime_offset, monotonic_offset;
	uint64_t seqnum;
	uint32_t raw_size, payload_size;
	uint32_t payload_crc;
	uint32_t nevents;
	uint64_t gap_lost;
	uint32_t incompat_flags; /* FR_CHUNK_INCOMPAT_*: decode its records with them */
};

int fr_chunk_builder_new(uint32_t cpu, size_t raw_max, struct fr_chunk_builder **ret);
struct fr_chunk_builder *fr_chunk_builder_free(struct fr_chunk_builder *b);

/* Appends a record.  -ENOBUFS when the chunk is full: close it and retry. */
int fr_chunk_builder_add(struct fr_chunk_builder *b, const struct fr_record *r);
/* Appends the switch records of @n BPF switch events, as
 * fr_chunk_builder_add() of each record would (record.h,
 * fr_record_encode_switch_events()): all or none.  Their cgroups are
 * described by the caller first.  -ENOBUFS when they do not all fit. */
struct fr_event_switch; /* bpf/event.h */
int fr_chunk_builder_add_switch_events(struct fr_chunk_builder *b, const struct fr_event_switch *e, size_t n);
size_t fr_chunk_builder_raw_size(const struct fr_chunk_builder *b);
/* Encoded size of the chunk closed last (for logs and statistics). */
size_t fr_chunk_builder_last_raw(const struct fr_chunk_builder *b);
uint32_t fr_chunk_builder_count(const struct fr_chunk_builder *b);
/* The oldest record time of the open chunk (CLOCK_BOOTTIME ns; 0 when
 * empty). */
uint64_t fr_chunk_builder_first_ts(const struct fr_chunk_builder *b);
/* CLOCK_MONOTONIC ns when the first record of the open chunk arrived
 * (0 when empty); the daemon closes chunks by age. */
uint64_t fr_chunk_builder_opened(const struct fr_chunk_builder *b);
void fr_chunk_builder_set_opened(struct fr_chunk_builder *b, uint64_t mono_ns);

/* Per-chunk metadata bookkeeping: true once the open chunk has an
 * FR_REC_CGROUP, FR_REC_MAPPING or FR_REC_SYMBOL record like @r (same
 * type, pid and cgroup id or start address): then it need not be added. */
bool fr_chunk_builder_described(struct fr_chunk_builder *b, const struct fr_record *r);
/* The same for the FR_REC_CGROUP record (pid 0) of @cgroup_id, without
 * making one: asked for every record. */
bool fr_chunk_builder_cgroup_described(struct fr_chunk_builder *b, uint64_t cgroup_id);

/* Compresses the open chunk with @cctx into a newly allocated buffer holding
 * header + payload + padding (*ret_len, multiple of 8) and empties the
 * builder.  @seqnum and @boot_id go into the header; clock offsets are read
 * now.  Returns 0 or -errno. */
int fr_chunk_builder_close(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx, uint64_t seqnum,
			   const uint8_t boot_id[16], void **ret_buf, size_t *ret_len);

/* The same for a chunk made again from the records of another (frctl
 * --redact): the header takes @like's seqnum, boot id and clock offsets,
 * so its records keep their times and its place in the store's order. */
int fr_chunk_builder_close_as(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx, const struct fr_chunk_info *like,
			      void **ret_buf, size_t *ret_len);

/* The same for a chunk of descriptions that stands for other chunks (an
 * incident's kernel names, kernel-names.h): its header spans @like's
 * first_ts..last_ts too, whatever its records' times, so that a window
 * that selects any of those chunks selects it. */
int fr_chunk_builder_close_spanning(struct fr_chunk_builder *b, struct ZSTD_CCtx_s *cctx,
				    const struct fr_chunk_info *like, void **ret_buf, size_t *ret_len);
/* Makes such a chunk, closed before, span @like instead: its header
 * takes @like's seqnum and clock offsets, and spans its own span and
 * @like's; its checksum is made again (the payload is as it was). */
void fr_chunk_respan(void *chunk, const struct fr_chunk_info *like);

/* Appends a closed chunk (@buf, @n bytes, malloc'd: taken, freed) to the
 * chunks end to end in *@out (*@len bytes, realloc'd). */
int fr_chunks_append(uint8_t **out, size_t *len, void *buf, size_t n);

/* Validates a header read from disk (magic, crc, version, flags, sane
 * sizes) and converts it.  -EBADMSG: damaged; -EPROTONOSUPPORT: a version
 * or incompatible flag this reader does not know. */
int fr_chunk_header_parse(const struct fr_chunk_header *h, struct fr_chunk_info *ret);

/* Total on-disk bytes of a chunk (header + payload + padding). */
static inline uint64_t fr_chunk_disk_size(const struct fr_chunk_info *ci)
{
	return ((uint64_t)sizeof(struct fr_chunk_header) + ci->payload_size + 7) & ~(uint64_t)7;
}

/* Bytes the payload decompresses to. */
static inline size_t fr_chunk_content_size(const struct fr_chunk_info *ci)
{
	return ci->raw_size + (ci->incompat_flags & FR_CHUNK_INCOMPAT_STREAMS ? FR_REC_STREAM_TABLE : 0);
}

/* Checks the payload crc and decompresses it, and sets @it to read its
 * records: a chunk of rows is decompressed into @raw (ci->raw_size
 * bytes), a chunk in columns into @scratch (fr_chunk_content_size()
 * bytes), and its records become rows in @raw as @it reads them (so
 * @scratch must stay until then).  With @raw NULL no rows are made: any
 * chunk is decompressed into @scratch and its records point there (so it
 * must stay as long as they are used).  -EBADMSG on any damage found. */
struct ZSTD_DCtx_s;
int fr_chunk_payload_decode(struct ZSTD_DCtx_s *dctx, const struct fr_chunk_info *ci,
			    const void *payload, uint8_t *raw, uint8_t *scratch, struct fr_record_iter *it);

uint32_t fr_crc32(const void *p, size_t n);

/* Fuzzing builds accept checksum mismatches, so mutated inputs reach the
 * decoders behind them (the libFuzzer convention). */
static inline bool fr_crc_mismatch(uint32_t stored, uint32_t computed)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	(void)stored;
	(void)computed;
	return false;
#else
	return stored != computed;
#endif
}

#endif
